defmodule HexagonTpu.Graph.Tensors do
  # A call's tensors on either side of the NIF: the inputs checked and converted for it
  # (InputCheck), the output types asked of it, and its answer made into what execute/3
  # returns: errors naming the tensor concerned, outputs as binaries or as Nx tensors of the
  # shape the execute wrote. Calls only HexagonTpu.Graph.CallOptions among Graph's parts.
  @moduledoc false

  alias HexagonTpu.{Error, InputCheck, NxTensors, Results}
  alias HexagonTpu.Graph.CallOptions

  # [{binary, dtype}] in graph-input order, checked by InputCheck.
  @spec prepare_inputs(HexagonTpu.Graph.t(), term(), :auto | :none) ::
          {:ok, [{binary(), atom()}]} | {:error, Error.t()}
  def prepare_inputs(g, inputs, quantize),
    do: InputCheck.all(%InputCheck{graph: g.name, quantize: quantize}, g.inputs, inputs)

  @spec output_types(HexagonTpu.Graph.t(), :auto | :none) :: [atom()]
  def output_types(%{outputs: outputs}, :auto), do: Enum.map(outputs, fn _ -> :f32 end)
  def output_types(%{outputs: outputs}, :none), do: Enum.map(outputs, & &1.dtype)

  # The names the core's messages may give ("input 'x'", "output 'y'"), for Error.put_tensor/2.
  @spec names(HexagonTpu.Graph.t()) :: [String.t()]
  def names(g), do: Enum.map(g.inputs, & &1.name) ++ Enum.map(g.outputs, & &1.name)

  # A NIF answer as {:ok, ...} or {:error, %Error{}} whose :tensor is the one its message names.
  @spec wrap(term(), HexagonTpu.Graph.t()) :: term()
  def wrap(answer, g), do: answer |> Error.wrap() |> Error.put_tensor(names(g))

  # For HexagonTpu.Call: the options of execute/3 checked as `where`, the output kind and the
  # inputs for the NIF.
  @spec prepare_call(HexagonTpu.Graph.t(), term(), keyword(), String.t()) ::
          {:ok, map(), atom(), [{binary(), atom()}], [atom()]} | {:error, Error.t()}
  def prepare_call(g, inputs, opts, where) do
    with {:ok, o} <- CallOptions.validate_call(opts, where),
         {:ok, kind} <- NxTensors.output_kind(o.output, where),
         {:ok, nif_inputs} <- prepare_inputs(g, inputs, o.quantize) do
      {:ok, o, kind, nif_inputs, output_types(g, o.dequantize)}
    end
  end

  # For HexagonTpu.Call: a NIF answer made into execute/3's.
  @spec finish_call(HexagonTpu.Graph.t(), term(), [atom()], atom(), boolean()) :: term()
  def finish_call(g, answer, out_types, kind, with_stats) do
    with {:ok, bins, stats} <- wrap(answer, g),
         {:ok, outputs} <- outputs(g, bins, out_types, kind, stats) do
      if with_stats, do: {:ok, outputs, stats}, else: {:ok, outputs}
    end
  end

  # The outputs of a call that succeeded, in execute/3's `:output` kind.
  @spec outputs(HexagonTpu.Graph.t(), [binary()], [atom()], :nx | :binary, map()) ::
          {:ok, list()} | {:error, Error.t()}
  def outputs(_g, bins, _types, :binary, _stats), do: {:ok, bins}

  # Nx failing on an output (its application stopped meanwhile, say) is an error, never a raise
  # after an execute that succeeded. An output with dynamic dimensions has the shape the execute
  # wrote (the NIF's :output_shapes, in the stats of a graph that has them).
  def outputs(g, bins, types, :nx, stats) do
    shapes =
      case stats do
        %{output_shapes: shapes} -> shapes
        _ -> Enum.map(g.outputs, & &1.shape)
      end

    [g.outputs, bins, types, shapes]
    |> Enum.zip()
    |> Results.map_ok(fn {info, bin, dtype, shape} ->
      NxTensors.output(bin, %{info | shape: shape}, dtype, g.name)
    end)
  end
end
