defmodule HexagonTpu.Batching do
  # HexagonTpu.predict_batch/3: a graph compiled for a batch of B rows (the leading dimension of
  # its tensors) runs N rows in chunks of B, the last one padded with zero rows; the outputs come
  # back with N rows, the padding's rows dropped. Each input is read and converted once for the
  # whole batch (one Nx.to_binary/1, one Nx.as_type/2 for another float type) and handed to the
  # NIF whole: one call (NIF.graph_execute_batch/5) runs every chunk, as one execute with a batch
  # multiple where the graph takes it, else each an execute of its own reading its part of the
  # inputs and writing its part of the outputs, so a batch costs one dirty-scheduler call, not one
  # per chunk. Only rows that need padding are copied.
  @moduledoc false

  require HexagonTpu.Graph
  alias HexagonTpu.{Error, Graph, InputCheck, NxTensors, Results, TensorInfo}
  alias HexagonTpu.Graph.{Batch, CallOptions, Tensors}

  @where "HexagonTpu.predict_batch/3"

  @spec predict_batch(Graph.t(), list(), keyword()) ::
          {:ok, list()} | {:ok, list(), map()} | {:error, Error.t()}
  def predict_batch(g, inputs, opts) when Graph.is_graph(g) do
    with {:ok, o} <- CallOptions.validate_execute(opts, @where),
         {:ok, kind} <- NxTensors.output_kind(o.output, @where),
         {:ok, batch} <- graph_batch(g),
         {:ok, prepared, rows} <- prepare_inputs(g, batch, inputs, o.quantize),
         out_types = Tensors.output_types(g, o.dequantize),
         {:ok, chunks, stats} <- run_chunks(g, batch, rows, prepared, out_types, o),
         {:ok, outputs} <- build_outputs(g, batch, rows, chunks, out_types, kind) do
      if o.stats, do: {:ok, outputs, stats}, else: {:ok, outputs}
    end
  end

  def predict_batch(other, _inputs, _opts),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{@where}: expected a %HexagonTpu.Graph{}, got #{inspect(other)}"
       )}

  @doc """
  The graph's batch: the leading dimension every input and output shares; an error when the
  graph has none (a scalar tensor, or tensors that disagree).
  """
  @spec graph_batch(Graph.t()) :: {:ok, pos_integer()} | {:error, Error.t()}
  def graph_batch(%Graph{inputs: inputs, outputs: outputs} = g) do
    tensors = inputs ++ outputs

    cond do
      inputs == [] ->
        not_batchable(g, "it has no inputs")

      scalar = Enum.find(tensors, &(tuple_size(&1.shape) == 0)) ->
        not_batchable(g, "'#{scalar.name}' is a scalar (shape {}): it has no batch dimension")

      true ->
        [first | _] = inputs
        batch = elem(first.shape, 0)

        per_axis = Enum.find(tensors, &match?(%{axis: 0}, &1.quantization))

        case Enum.find(tensors, &(elem(&1.shape, 0) != batch)) do
          nil when batch > 1 and per_axis != nil ->
            not_batchable(
              g,
              "'#{per_axis.name}' is quantized per axis along axis 0, its batch axis: each of " <>
                "its #{batch} rows has its own scale and zero point, so a row's result would " <>
                "depend on where it lands in a batch"
            )

          nil when batch > 0 ->
            {:ok, batch}

          nil ->
            not_batchable(g, "its leading dimension is 0")

          other ->
            not_batchable(
              g,
              "its tensors disagree on the leading (batch) dimension: '#{first.name}' " <>
                "#{inspect(first.shape)}, '#{other.name}' #{inspect(other.shape)}"
            )
        end
    end
  end

  defp not_batchable(g, why) do
    {:error,
     Error.new(:invalid_argument, "#{@where}: graph '#{g.name}' cannot be batched: #{why}")}
  end

  # ---- inputs: [{binary of all rows, dtype for the NIF, rows}] --------------------------------

  defp prepare_inputs(g, batch, inputs, quantize) do
    check = %InputCheck{graph: g.name, where: @where, quantize: quantize, rows: batch}

    with {:ok, prepared} <- InputCheck.all(check, g.inputs, inputs),
         {:ok, rows} <- InputCheck.same_rows(check, g.inputs, Enum.map(prepared, &elem(&1, 2))) do
      {:ok, prepared, rows}
    end
  end

  # ---- the executes ---------------------------------------------------------------------------

  defp run_chunks(g, batch, rows, prepared, out_types, o) do
    chunks = div(rows + batch - 1, batch)
    pad_rows = chunks * batch - rows
    nif_inputs = for {bin, dtype, _} <- prepared, do: {pad(bin, rows, pad_rows), dtype}
    meta = %{batch_size: rows, chunks: chunks}

    result =
      if submitted?(g, o),
        do: Batch.submit_chunks(g, nif_inputs, out_types, o, batch, meta),
        else: Batch.execute_chunks(g, nif_inputs, out_types, o.perf_profile, batch, meta)

    case result do
      {:ok, bins, stats} -> {:ok, bins, Map.put(stats, :chunks, chunks)}
      {:error, %Error{} = e} -> {:error, %{e | message: "#{e.message} (#{@where})"}}
    end
  end

  # The batch goes on the graph's queue as submitted calls (answers as messages), except on
  # request (scheduler: :dirty_io without :timeout or :priority, as predict/3). A sampled batch
  # (profile_every) goes the same way as any other: its profile rides on its call.
  defp submitted?(g, o),
    do: not ((o.scheduler || g.scheduler) == :dirty_io and o.timeout == nil and o.priority == nil)

  # The rows followed by `pad_rows` zero rows (zero is a valid value in every type, and their
  # results are dropped): a copy, made only when the rows are not a whole number of chunks.
  defp pad(bin, _rows, 0), do: bin

  defp pad(bin, rows, pad_rows),
    do: bin <> :binary.copy(<<0>>, div(byte_size(bin), rows) * pad_rows)

  # ---- outputs --------------------------------------------------------------------------------

  defp build_outputs(g, batch, rows, bins, out_types, kind) do
    [g.outputs, out_types, bins]
    |> Enum.zip()
    |> Results.map_ok(fn {info, dtype, bin} ->
      row_bytes = div(info.num_elements, batch) * TensorInfo.element_size(dtype)
      # the padding's rows are at the end
      bin =
        if byte_size(bin) == rows * row_bytes,
          do: bin,
          else: binary_part(bin, 0, rows * row_bytes)

      output(g, info, dtype, bin, rows, kind)
    end)
  end

  defp output(_g, _info, _dtype, bin, _rows, :binary), do: {:ok, bin}

  defp output(g, info, dtype, bin, rows, :nx),
    do: NxTensors.output(bin, %{info | shape: put_elem(info.shape, 0, rows)}, dtype, g.name)
end
