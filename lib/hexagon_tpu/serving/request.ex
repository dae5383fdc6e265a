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
  # entries are the request (a tensor for a graph of one input, a tuple of the inputs in graph
  # order, or a map of them keyed by input name), or a list with a batch (or a tensor) per
  # input. A batch is the rows it holds, its padding dropped.
  defp from_batches(spec, %{__struct__: Nx.Batch} = batch),
    do: entry_inputs(spec, batch_contents(spec, batch))

  defp from_batches(spec, [_ | _] = list) do
    if proper_list?(list), do: Enum.map(list, &one_tensor(spec, &1)), else: list
  end

  defp from_batches(_spec, input), do: input

  # A batch in a list of inputs is that one input: entries of one tensor (or a tuple of one).
  # A map names inputs, so it cannot stand in one position of the list.
  defp one_tensor(spec, %{__struct__: Nx.Batch} = batch) do
    case batch_contents(spec, batch) do
      %{__struct__: Nx.Tensor} = t ->
        t

      {%{__struct__: Nx.Tensor} = t} ->
        t

      other ->
        raise request_error(
                spec,
                "an Nx.Batch in a list of inputs must hold one tensor per entry (one input), " <>
                  "got #{entry_kind(other)}; a batch of tuples or maps is the whole request"
              )
    end
  end

  defp one_tensor(_spec, other), do: other

  defp batch_contents(spec, %{__struct__: Nx.Batch, stack: [], size: 0}),
    do: raise(request_error(spec, "got an empty Nx.Batch"))

  defp batch_contents(_spec, batch), do: BatchStack.contents(batch)

  defp entry_kind(t) when is_tuple(t), do: "#{tuple_size(t)} per entry (a tuple)"
  defp entry_kind(m) when is_map(m) and not is_struct(m), do: "a map per entry"
  defp entry_kind(_other), do: "another container per entry"

  # The inputs, in graph order, of a batch's entries.
  defp entry_inputs(_spec, %{__struct__: Nx.Tensor} = t), do: [t]

  defp entry_inputs(spec, tuple) when is_tuple(tuple) do
    Enum.map(Tuple.to_list(tuple), &entry_tensor(spec, &1, tuple))
  end

  defp entry_inputs(spec, map) when is_map(map) and not is_struct(map), do: by_name(spec, map)
  defp entry_inputs(spec, other), do: raise(nested(spec, other))

  defp entry_tensor(_spec, %{__struct__: Nx.Tensor} = t, _entry), do: t
  defp entry_tensor(spec, _other, entry), do: raise(nested(spec, entry))

  defp nested(spec, entry) do
    request_error(
      spec,
      "Nx.Batch entries must be a tensor, a tuple of tensors (the inputs in graph order) or " <>
        "a map of tensors keyed by input name, got #{inspect(entry, limit: 3)}"
    )
  end

  # A map's entries matched to the graph's inputs by name (a string, or an atom of it): never
  # by the order of its keys, which is no input order.
  defp by_name(spec, map) do
    names = Enum.map(spec.inputs, & &1.name)

    keyed =
      Enum.map(map, fn {key, t} -> {key_name(spec, key), key, entry_tensor(spec, t, map)} end)

    case keyed |> Enum.group_by(&elem(&1, 0)) |> Enum.find(fn {_, ks} -> length(ks) > 1 end) do
      {name, ks} ->
        given = Enum.map_join(ks, " and ", &inspect(elem(&1, 1)))

        raise request_error(
                spec,
                "in an Nx.Batch of maps, input #{inspect(name)} given twice (#{given})"
              )

      nil ->
        :ok
    end

    given = Map.new(keyed, fn {name, _key, t} -> {name, t} end)
    missing = Enum.reject(names, &Map.has_key?(given, &1))
    unknown = given |> Map.keys() |> Enum.reject(&(&1 in names)) |> Enum.sort()

    if missing != [] or unknown != [] do
      quoted = &Enum.map_join(&1, ", ", fn name -> inspect(name) end)

      what =
        [
          missing != [] && "an Nx.Batch of maps has no entry for input(s) #{quoted.(missing)}",
          unknown != [] && "the graph has no input(s) named #{quoted.(unknown)}"
        ]
        |> Enum.filter(& &1)
        |> Enum.join("; ")

      raise Error.new(
              :mismatch,
              "HexagonTpu.Serving: graph '#{spec.graph}': #{what} (the graph's inputs are " <>
                "#{Enum.join(names, ", ")})"
            )
    end

    Enum.map(names, &Map.fetch!(given, &1))
  end

  defp key_name(_spec, key) when is_binary(key), do: key
  defp key_name(_spec, key) when is_atom(key) and not is_nil(key), do: Atom.to_string(key)

  defp key_name(spec, key) do
    raise request_error(
            spec,
            "in an Nx.Batch of maps, the keys must be input names (strings or atoms), " <>
              "got #{inspect(key, limit: 3)}"
          )
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
