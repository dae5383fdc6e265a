defmodule HexagonTpu.Serving.RowTags do
  @moduledoc false
  # Each served row carries a tag from its caller to the batch and back, so that a request's
  # answer is right whatever Nx.Serving does with its rows.
  #
  # Nx.Serving 0.7 splits a request that does not fit in what is left of the batch being
  # filled: its first rows complete that batch, the rest go to the next one. The caller then
  # joins the pieces' answers in the order they arrive (partitions run batches concurrently)
  # and keeps the metadata of the last piece only. So the serving cannot tell a caller anything
  # through the order of rows or through the metadata alone. Instead:
  #
  #   * the caller adds one tensor to its request: each row's index in the request (s64);
  #   * the batch passes it through as one more output, the row's "info": the index, plus the
  #     id of the batch's error in the high 32 bits when the row's execute failed;
  #   * the caller, holding every row of its answer, reorders them by index (a no-op in the
  #     usual case: one piece, in order), checks that each index came back once, and raises
  #     the error of its first failed row.
  #
  # A serving process keeps the errors in its error table (an ETS table it owns, on its node,
  # where the caller's postprocessing runs too, also for requests sent from another node): the
  # caller finds its error by id whichever piece failed, and the batch's metadata, which goes
  # to every caller of the batch, stays small. The table keeps the last @kept errors. An inline
  # run (Nx.Serving.run/2) has one caller and never splits its request: its errors travel in the
  # metadata.

  @compile {:no_warn_undefined, [Nx]}

  alias HexagonTpu.Error

  @kept 65_536
  @max_id 0x7FFFFFFF

  @doc "The tags a request of `rows` rows sends: 0..rows-1, s64 native."
  @spec iota(pos_integer()) :: binary()
  def iota(rows), do: for(i <- 0..(rows - 1), into: <<>>, do: <<i::signed-64-native>>)

  # Requests of up to this many rows take their tags tensor from a table made once per VM
  # (Nx.from_binary/2 costs ~2.5 us, a third of a one-row request's own work in its caller).
  @cached 64

  @doc "The tags as the tensor the request adds to its inputs."
  @spec tensor(pos_integer()) :: struct()
  def tensor(rows) when rows <= @cached, do: elem(cached(), rows - 1)
  def tensor(rows), do: Nx.from_binary(iota(rows), {:s, 64})

  defp cached do
    key = {__MODULE__, :tensors}

    case :persistent_term.get(key, nil) do
      nil ->
        tensors = List.to_tuple(for rows <- 1..@cached, do: Nx.from_binary(iota(rows), {:s, 64}))
        :persistent_term.put(key, tensors)
        tensors

      tensors ->
        tensors
    end
  end

  @doc "The rows' info when their execute failed with the error of id `id`."
  @spec failed(binary(), pos_integer()) :: binary()
  def failed(tags, id) do
    high = id * 0x1_0000_0000
    for <<tag::signed-64-native <- tags>>, into: <<>>, do: <<tag + high::signed-64-native>>
  end

  # ---- the serving side: where errors are kept ----------------------------------------------

  @doc "The error table of a serving process (owned by the caller of this function)."
  @spec new_table() :: :ets.tid()
  def new_table, do: :ets.new(__MODULE__, [:ordered_set, :public])

  @doc """
  Keeps `error` and returns its id: in `table` (a serving process), or numbered within
  `errors` (an inline run's batch, whose metadata carries them).
  """
  @spec put_error(:ets.tid() | nil, map(), Error.t()) :: {pos_integer(), map()}
  def put_error(nil, errors, error) do
    id = map_size(errors) + 1
    {id, Map.put(errors, id, error)}
  end

  def put_error(table, errors, error) do
    # Ids wrap after 2^31 - 1 failed requests: by then the old holder of an id is long gone.
    id = :ets.update_counter(table, :next_id, {2, 1, @max_id, 1}, {:next_id, 0})
    :ets.insert(table, {id, error})
    trim(table)
    {id, errors}
  end

  @doc "How many errors a serving keeps."
  def kept, do: @kept

  # The smallest ids are the oldest (until the ids wrap); :next_id sorts after every integer.
  defp trim(table) do
    if :ets.info(table, :size) > @kept + 1 do
      case :ets.first(table) do
        id when is_integer(id) -> :ets.delete(table, id)
        _ -> :ok
      end

      trim(table)
    end
  end

  # ---- the caller's side --------------------------------------------------------------------

  @doc """
  The request's outputs (Nx tensors, rows in arrival order) in row order, given the rows'
  info; raises the request's error (the one of its first failed row), or a `:serving_error`
  when rows are missing or repeated.
  """
  @spec outputs([struct()], struct(), pos_integer(), map(), String.t()) :: [struct()]
  def outputs(outputs, info, rows, meta, graph) do
    bin = Nx.to_binary(info)

    if bin == iota(rows) do
      outputs
    else
      decoded =
        for <<v::signed-64-native <- bin>>, do: {rem(v, 0x1_0000_0000), div(v, 0x1_0000_0000)}

      check_complete!(decoded, rows, graph)

      case decoded |> Enum.filter(fn {_tag, id} -> id != 0 end) |> Enum.min(fn -> nil end) do
        nil -> reorder(outputs, decoded)
        {tag, id} -> raise error!(meta, id, tag, graph)
      end
    end
  end

  defp check_complete!(decoded, rows, graph) do
    tags = decoded |> Enum.map(&elem(&1, 0)) |> Enum.sort()

    if tags != Enum.to_list(0..(rows - 1)) do
      raise Error.new(
              :serving_error,
              "HexagonTpu.Serving: graph '#{graph}': the answer to a request of #{rows} rows " <>
                "came back with the rows #{inspect(tags, limit: 16)} (expected each of " <>
                "0..#{rows - 1} once)"
            )
    end
  end

  defp reorder(outputs, decoded) do
    order =
      decoded
      |> Enum.with_index()
      |> Enum.sort_by(fn {{tag, _id}, _position} -> tag end)
      |> Enum.map(&elem(&1, 1))
      |> Nx.tensor(type: {:s, 64})

    Enum.map(outputs, &Nx.take(&1, order, axis: 0))
  end

  defp error!(meta, id, tag, graph) do
    case Map.fetch(Map.get(meta, :errors, %{}), id) do
      {:ok, error} ->
        error

      :error ->
        case lookup(Map.get(meta, :errors_table), id) do
          {:ok, error} ->
            error

          :error ->
            Error.new(
              :serving_error,
              "HexagonTpu.Serving: graph '#{graph}': row #{tag} of the request ran in a batch " <>
                "that failed, and that batch's error is no longer kept (the serving keeps the " <>
                "last #{@kept}, or it stopped)"
            )
        end
    end
  end

  defp lookup(nil, _id), do: :error

  defp lookup(table, id) do
    case :ets.lookup(table, id) do
      [{^id, error}] -> {:ok, error}
      [] -> :error
    end
  rescue
    # the serving stopped: its table is gone
    ArgumentError -> :error
  end
end
