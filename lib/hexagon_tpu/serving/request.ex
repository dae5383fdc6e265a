defmodule HexagonTpu.Serving.Request do
  # One request of HexagonTpu.Serving, in its caller (Nx.Serving's client_preprocessing and
  # client_postprocessing): checked and made into an Nx.Batch of its rows, each row tagged
  # with its index (RowTags); then its rows taken back out of the batch answer(s).
  @moduledoc false

  alias HexagonTpu.{Error, InputCheck}
  alias HexagonTpu.Serving.{BatchStack, RowTags}

  @compile {:no_warn_undefined, [Nx, Nx.Batch]}

  @doc """
  The checks a request of the serving `spec` goes through (`HexagonTpu.InputCheck`): rows of
  the graph's batch, in one type per serving (so requests merge into one batch), as tensors.
  """
  @spec check(map()) :: InputCheck.t()
  def check(spec) do
    %InputCheck{
      graph: spec.graph,
      where: "HexagonTpu.Serving",
      quantize: spec.quantize,
      rows: spec.batch,
      types: :single,
      to: :tensor
    }
  end

  @doc false
  # Nx.Serving's client_preprocessing: the request (a list of inputs, or one input alone for a
  # graph of one) as an Nx.Batch, and its rows; a bad request raises in its caller.
  def preprocess(%{check: check, inputs: infos} = spec, input) do
    input = from_batches(spec, input)
    input = if is_list(input) or length(infos) != 1, do: input, else: [input]
    prepared = ok!(InputCheck.all(check, infos, input))
    tensors = Enum.map(prepared, fn {t, _dtype, _rows} -> unnamed(t) end)
    all_rows = Enum.map(prepared, &elem(&1, 2))
    rows = ok!(InputCheck.same_rows(check, infos, all_rows))

    # Nx.Serving 0.7 would split a larger request over several batches and join the pieces'
    # answers in the order they arrive (partitions run them concurrently), with the metadata,
    # and so the error, of the last piece only: a failed piece would come back as rows of
    # zeros. HexagonTpu.Serving.batched_run/3 splits such a request itself
    # (HexagonTpu.Serving.Client).
    if rows > spec.batch_size do
      raise Error.new(:too_large, too_large(spec, rows),
              details: %{rows: rows, batch_size: spec.batch_size}
            )
    end

    # The inputs, then each row's index in the request (RowTags: what makes the answer right
    # when Nx.Serving splits the request over two batches).
    entry = List.to_tuple(tensors ++ [RowTags.tensor(rows)])
    {Nx.Batch.concatenate([entry]), rows}
  end

  # Nx.Batch requests, the form Ortex.Serving's and Bumblebee's callers write: one batch whose
  # entries are the inputs (a tensor for a graph of one input, a tuple for several), or a list
  # with a batch (or a tensor) per input. A batch is the rows it holds, its padding dropped.
  defp from_batches(spec, %{__struct__: Nx.Batch} = batch), do: batch_tensors(spec, batch)

  defp from_batches(spec, [_ | _] = list) do
    if proper_list?(list), do: Enum.map(list, &one_tensor(spec, &1)), else: list
  end

  defp from_batches(_spec, input), do: input

  defp one_tensor(spec, %{__struct__: Nx.Batch} = batch) do
    case batch_tensors(spec, batch) do
      [t] ->
        t

      tensors ->
        raise request_error(
                spec,
                "an Nx.Batch in a list of inputs must hold one tensor per entry (one input), " <>
                  "got #{length(tensors)}; a batch of tuples is the whole request"
              )
    end
  end

  defp one_tensor(_spec, other), do: other

  defp batch_tensors(spec, %{__struct__: Nx.Batch, stack: [], size: 0}),
    do: raise(request_error(spec, "got an empty Nx.Batch"))

  defp batch_tensors(_spec, %{__struct__: Nx.Batch, size: size, pad: pad} = batch) do
    tensors = BatchStack.traverse(batch)
    if pad == 0, do: tensors, else: Enum.map(tensors, &Nx.slice_along_axis(&1, 0, size, axis: 0))
  end

  defp proper_list?([_ | rest]), do: proper_list?(rest)
  defp proper_list?([]), do: true
  defp proper_list?(_tail), do: false

  defp request_error(spec, what),
    do: Error.new(:invalid_argument, "HexagonTpu.Serving: graph '#{spec.graph}': #{what}")

  # Axis names would travel into the batch, where Nx.Batch refuses to merge requests whose
  # names differ: one caller's names would fail the batch of every other.
  defp unnamed(%{names: names} = t) do
    if Enum.all?(names, &is_nil/1), do: t, else: Nx.rename(t, Enum.map(names, fn _ -> nil end))
  end

  defp ok!({:error, %Error{} = e}), do: raise(e)
  defp ok!({:ok, value}), do: value
  defp ok!(ok), do: ok

  defp too_large(spec, rows) do
    "HexagonTpu.Serving: graph '#{spec.graph}': a request of #{rows} rows is larger than " <>
      "the serving's batch_size of #{spec.batch_size} rows; send it with " <>
      "HexagonTpu.Serving.batched_run/3, which splits it into requests of at most " <>
      "batch_size rows and joins their answers in order, or run it with " <>
      "HexagonTpu.predict_batch/3"
  end

  @doc false
  # The request's rows of the batch answer(s): its outputs and each row's info (RowTags), in
  # the order Nx.Serving delivered them.
  def postprocess({{outputs, info}, meta}, rows, graph, output) do
    outputs |> output_list() |> RowTags.outputs(info, rows, meta, graph) |> as_output(output)
  end

  defp as_output(outputs, :nx), do: outputs
  defp as_output(outputs, :binary), do: Enum.map(outputs, &Nx.to_binary/1)

  # One output travels alone (HexagonTpu.Serving.answer/2), several as a tuple.
  defp output_list(outputs) when is_tuple(outputs), do: Tuple.to_list(outputs)
  defp output_list(output), do: [output]
end
