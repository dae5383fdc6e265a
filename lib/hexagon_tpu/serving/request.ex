defmodule HexagonTpu.Serving.Request do
  # One request of HexagonTpu.Serving, in its caller (Nx.Serving's client_preprocessing and
  # client_postprocessing): checked and made into an Nx.Batch of its rows, each row tagged
  # with its index (RowTags); then its rows taken back out of the batch answer(s).
  @moduledoc false

  alias HexagonTpu.{Batching, Error}
  alias HexagonTpu.Serving.RowTags

  @compile {:no_warn_undefined, [Nx, Nx.Batch]}

  @doc false
  def preprocess(spec, input) do
    inputs =
      cond do
        is_list(input) and not proper_list?(input) ->
          raise request_error(
                  spec,
                  "expected a list of #{length(spec.inputs)} inputs, got an improper list: " <>
                    inspect(input, limit: 5)
                )

        is_list(input) ->
          input

        length(spec.inputs) == 1 ->
          [input]

        true ->
          raise request_error(spec, "expected a list of #{length(spec.inputs)} inputs")
      end

    if length(inputs) != length(spec.inputs) do
      names = Enum.map_join(spec.inputs, ", ", & &1.name)

      raise request_error(
              spec,
              "expects #{length(spec.inputs)} input(s) (#{names}), got #{length(inputs)}"
            )
    end

    tensors = request_tensors(spec, spec.inputs, inputs, 0) |> Enum.map(&unnamed/1)
    [rows | _] = all_rows = Enum.map(tensors, &elem(&1.shape, 0))

    if not Enum.all?(all_rows, &(&1 == rows)) do
      raise request_error(spec, "the inputs have different numbers of rows: #{inspect(all_rows)}")
    end

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

  # Axis names would travel into the batch, where Nx.Batch refuses to merge requests whose
  # names differ: one caller's names would fail the batch of every other.
  defp unnamed(%{names: names} = t) do
    if Enum.all?(names, &is_nil/1), do: t, else: Nx.rename(t, Enum.map(names, fn _ -> nil end))
  end

  defp proper_list?([_ | rest]), do: proper_list?(rest)
  defp proper_list?([]), do: true
  defp proper_list?(_tail), do: false

  defp request_tensors(spec, [info | infos], [x | xs], i),
    do: [request_tensor(spec, info, i, x) | request_tensors(spec, infos, xs, i + 1)]

  defp request_tensors(_spec, [], [], _i), do: []

  # The request's rows as a tensor of the type every request of this serving has (so requests
  # merge into one batch): f32 with quantize: :auto, the input's own type with :none.
  defp request_tensor(spec, info, i, %{__struct__: Nx.Tensor} = t) do
    want = want_type(spec, info)

    cond do
      t.vectorized_axes != [] ->
        input_error(spec, info, i, "got a vectorized tensor; put the rows on the leading axis")

      not rows_shape?(t.shape, info.shape) ->
        input_error(
          spec,
          info,
          i,
          "expected shape #{Batching.rows_shape(info.shape)}, got #{inspect(t.shape)}"
        )

      t.type == want ->
        t

      want == {:f, 32} and elem(t.type, 0) in [:f, :bf] ->
        Nx.as_type(t, want)

      want == {:f, 32} ->
        input_error(
          spec,
          info,
          i,
          "expected a float tensor (quantize: :auto; {:f, 64}, {:f, 16} and {:bf, 16} are " <>
            "converted), got #{inspect(t.type)}; a serving started with quantize: :none " <>
            "takes tensors in the input's own type #{inspect(info.type)}"
        )

      true ->
        input_error(
          spec,
          info,
          i,
          "expected type #{inspect(want)} (quantize: :none: the input's own type), got " <>
            "#{inspect(t.type)}"
        )
    end
  end

  defp request_tensor(spec, info, i, bin) when is_binary(bin) do
    {kind, bits} = type = want_type(spec, info)
    per_row = div(info.num_elements, spec.batch)
    row_bytes = per_row * div(bits, 8)

    if row_bytes > 0 and byte_size(bin) > 0 and rem(byte_size(bin), row_bytes) == 0 do
      shape = put_elem(info.shape, 0, div(byte_size(bin), row_bytes))
      bin |> Nx.from_binary(type) |> Nx.reshape(shape)
    else
      input_error(
        spec,
        info,
        i,
        "expected a whole number (>= 1) of rows of #{row_bytes} bytes (#{per_row} " <>
          "#{kind}#{bits} elements each: shape #{Batching.rows_shape(info.shape)}), got " <>
          "#{byte_size(bin)} bytes"
      )
    end
  end

  defp request_tensor(spec, info, i, other),
    do:
      input_error(
        spec,
        info,
        i,
        "expected an Nx tensor or a binary, got #{inspect(other, limit: 5)}"
      )

  defp want_type(%{quantize: :auto}, _info), do: {:f, 32}
  defp want_type(%{quantize: :none}, info), do: info.type

  defp rows_shape?(shape, graph_shape) do
    tuple_size(shape) == tuple_size(graph_shape) and tuple_size(shape) > 0 and
      elem(shape, 0) > 0 and Tuple.delete_at(shape, 0) == Tuple.delete_at(graph_shape, 0)
  end

  defp input_error(spec, info, i, what) do
    raise Error.new(
            :mismatch,
            "HexagonTpu.Serving: graph '#{spec.graph}' input '#{info.name}' (#{i}): #{what}",
            tensor: info.name
          )
  end

  defp too_large(spec, rows) do
    "HexagonTpu.Serving: graph '#{spec.graph}': a request of #{rows} rows is larger than " <>
      "the serving's batch_size of #{spec.batch_size} rows; send it with " <>
      "HexagonTpu.Serving.batched_run/3, which splits it into requests of at most " <>
      "batch_size rows and joins their answers in order, or run it with " <>
      "HexagonTpu.predict_batch/3"
  end

  defp request_error(spec, what),
    do: Error.new(:mismatch, "HexagonTpu.Serving: graph '#{spec.graph}' #{what}")

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
