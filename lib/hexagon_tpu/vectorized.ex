defmodule HexagonTpu.Vectorized do
  # HexagonTpu.Graph.execute/3 with vectorized Nx tensors (Nx.vectorize/2) among the inputs. A
  # graph has fixed shapes, so each entry of the vectorized axes is one execute: the vectorized
  # inputs are broadcast to the same axes (Nx.broadcast_vectors/1), entry i of each (and every
  # input that is not vectorized, as it is) is executed, and each output comes back vectorized
  # on those axes. Each execute is a usual one (its own telemetry span); an error stops at the
  # first entry that fails and names it.
  @moduledoc false

  alias HexagonTpu.{Error, NxTensors}

  @compile {:no_warn_undefined, [Nx]}

  @typep run :: (HexagonTpu.Graph.t(), list(), keyword() -> tuple())

  @doc "Is any of `inputs` a vectorized Nx tensor? (`inputs` a proper list)"
  @spec any?(list()) :: boolean()
  def any?(inputs), do: Enum.any?(inputs, &NxTensors.vectorized?/1)

  @doc """
  Runs `run` (`HexagonTpu.Graph.execute/3`) once per entry; returns what it returns, with each
  output vectorized (Nx outputs) or the entries' bytes one after another (`output: :binary`),
  and with `stats: true` the entries' statistics added up.
  """
  @spec execute(HexagonTpu.Graph.t(), list(), keyword(), run()) :: tuple()
  def execute(g, inputs, opts, run) do
    with :ok <- fixed_outputs(g),
         {:ok, axes, entries} <- split(g, inputs) do
      count = length(entries)

      entries
      |> Enum.with_index()
      |> Enum.reduce_while({:ok, []}, fn {entry, i}, {:ok, acc} ->
        case run.(g, entry, opts) do
          {:error, %Error{} = e} ->
            {:halt, {:error, %{e | message: "#{e.message} (vectorized entry #{i} of #{count})"}}}

          ok ->
            {:cont, {:ok, [ok | acc]}}
        end
      end)
      |> case do
        {:ok, results} -> join(g, Enum.reverse(results), axes)
        error -> error
      end
      |> case do
        {:ok, {outputs, nil}} -> {:ok, outputs}
        {:ok, {outputs, stats}} -> {:ok, outputs, stats}
        error -> error
      end
    end
  end

  # Each entry's output with dynamic dimensions has a shape of its own: entries cannot be
  # joined into one vectorized tensor (or one binary whose parts could be told apart).
  defp fixed_outputs(g) do
    case Enum.find(g.outputs, &(&1.dynamic_dims != [])) do
      nil ->
        :ok

      out ->
        {:error,
         Error.new(
           :invalid_argument,
           "graph '#{g.name}' output '#{out.name}' has dynamic dimensions: each execute sets " <>
             "its shape, so vectorized inputs (one execute per entry) cannot be joined; " <>
             "predict each entry on its own",
           tensor: out.name
         )}
    end
  end

  # The inputs of every entry, in order, and the vectorized axes ([name: size, ...]).
  defp split(g, inputs) do
    vectorized = for {t, i} <- Enum.with_index(inputs), NxTensors.vectorized?(t), do: {i, t}

    with {:ok, broadcast} <- broadcast(g, vectorized) do
      axes = hd(broadcast).vectorized_axes
      count = axes |> Keyword.values() |> Enum.product()

      try do
        flat =
          for {{i, _}, t} <- Enum.zip(vectorized, broadcast), into: %{} do
            dev = Nx.devectorize(t, keep_names: false)
            {i, Nx.reshape(dev, Tuple.insert_at(Nx.shape(t), 0, count))}
          end

        for e <- 0..(count - 1)//1 do
          for {input, i} <- Enum.with_index(inputs) do
            case flat do
              %{^i => t} -> t |> Nx.slice_along_axis(e, 1, axis: 0) |> Nx.squeeze(axes: [0])
              _ -> input
            end
          end
        end
      rescue
        e ->
          {:error,
           Error.new(
             :nx_error,
             "graph '#{g.name}': Nx could not split the vectorized inputs into entries " <>
               "(#{Exception.message(e)})"
           )}
      else
        [] -> {:error, Error.new(:mismatch, "graph '#{g.name}': vectorized axes with no entry")}
        entries -> {:ok, axes, entries}
      end
    end
  end

  # Nx.broadcast_vectors/1: the vectorized inputs to the same axes, as Nx broadcasts them.
  defp broadcast(g, vectorized) do
    {:ok, Nx.broadcast_vectors(Enum.map(vectorized, &elem(&1, 1)))}
  rescue
    e ->
      shown =
        Enum.map_join(vectorized, ", ", fn {i, t} ->
          "'#{Enum.at(g.inputs, i).name}' #{inspect(t.vectorized_axes)}"
        end)

      {:error,
       Error.new(
         :mismatch,
         "graph '#{g.name}': the vectorized inputs (#{shown}) cannot be broadcast to the same " <>
           "vectorized axes (#{Exception.message(e)})"
       )}
  end

  # [{:ok, outputs} | {:ok, outputs, stats}] per entry -> {:ok, {outputs, stats | nil}}
  defp join(g, results, axes) do
    per_output = results |> Enum.map(&elem(&1, 1)) |> Enum.zip() |> Enum.map(&Tuple.to_list/1)

    stats =
      case results do
        [{:ok, _, _} | _] -> results |> Enum.map(&elem(&1, 2)) |> Enum.reduce(&add_stats/2)
        _ -> nil
      end

    try do
      {:ok, {Enum.map(per_output, &join_output(&1, axes)), stats}}
    rescue
      e ->
        {:error,
         Error.new(
           :nx_error,
           "graph '#{g.name}': Nx could not vectorize the outputs (#{Exception.message(e)})"
         )}
    end
  end

  defp join_output([bin | _] = bins, _axes) when is_binary(bin), do: IO.iodata_to_binary(bins)

  defp join_output([t | _] = tensors, axes) do
    shape = Keyword.values(axes) ++ Tuple.to_list(Nx.shape(t))

    tensors
    |> Nx.stack()
    |> Nx.reshape(List.to_tuple(shape))
    |> Nx.vectorize(axes)
  end

  defp add_stats(a, b) do
    Map.merge(a, b, fn
      _k, x, y when is_integer(x) and is_integer(y) -> x + y
      _k, _x, y -> y
    end)
  end
end
