defmodule HexagonTpu.Serving.Client do
  # HexagonTpu.Serving.batched_run/3, in the caller: Nx.Serving.batched_run/2 with a timeout,
  # errors returned instead of raised or exited, a request of more rows than the serving's
  # batch_size split into pieces (joined in row order), and retries when the node serving a
  # request goes down.
  @moduledoc false

  alias HexagonTpu.{Error, Options}
  alias HexagonTpu.Serving.BatchStack

  @compile {:no_warn_undefined, [Nx, Nx.Serving, Nx.Batch]}

  @run_opts %{
    retries: {:non_neg_integer, "a non-negative integer", 2},
    timeout: {&__MODULE__.timeout?/1, "a positive integer (milliseconds) or :infinity", 30_000}
  }

  @doc false
  def timeout?(v), do: v == :infinity or (is_integer(v) and v > 0)

  @doc "`HexagonTpu.Serving.batched_run/3`."
  @spec batched_run(term(), term(), keyword()) :: {:ok, list()} | {:error, Error.t()}
  def batched_run(name, input, opts) do
    with :ok <- check_name(name) do
      run_with(name, input, Options.validate(opts, @run_opts, "HexagonTpu.Serving.batched_run/3"))
    end
  end

  defp check_name(name) when is_atom(name) and name != nil, do: :ok
  defp check_name({scope, name}) when scope in [:local, :distributed] and is_atom(name), do: :ok

  defp check_name(other) do
    {:error,
     Error.new(
       :invalid_argument,
       "HexagonTpu.Serving.batched_run/3: expected the name of an Nx.Serving (an atom, " <>
         "{:local, atom} or {:distributed, atom}), got #{inspect(other, limit: 5)}"
     )}
  end

  defp run_with(name, input, options) do
    case options do
      {:ok, %{retries: retries, timeout: :infinity}} ->
        run_whole(name, input, retries)

      {:ok, %{retries: retries, timeout: timeout}} ->
        with_timeout(name, timeout, fn -> run_whole(name, input, retries) end)

      error ->
        error
    end
  end

  # Nx.Serving.batched_run/2 waits without a timeout, so the request runs in a process of its
  # own, linked (it goes when the caller goes) and killed when the time is up. It unlinks
  # before answering, so a caller trapping exits gets no exit message from it.
  defp with_timeout(name, timeout, fun) do
    caller = self()
    ref = make_ref()

    pid =
      spawn_link(fn ->
        result = fun.()
        Process.unlink(caller)
        send(caller, {ref, result})
      end)

    monitor = Process.monitor(pid)

    receive do
      {^ref, result} ->
        Process.demonitor(monitor, [:flush])
        result

      {:DOWN, ^monitor, _, _, reason} ->
        {:error,
         Error.new(:serving_error, "#{inspect(name)}: the request exited: #{inspect(reason)}")}
    after
      timeout ->
        Process.unlink(pid)
        Process.exit(pid, :kill)
        Process.demonitor(monitor, [:flush])

        # it may have answered meanwhile
        receive do
          {^ref, _} -> :ok
        after
          0 -> :ok
        end

        {:error,
         Error.new(
           :timeout,
           "Nx.Serving #{inspect(name)} did not answer within #{timeout} ms (timeout:)"
         )}
    end
  end

  # At most this many pieces of a split request are in flight at once.
  @piece_concurrency 16

  defp run_whole(name, input, retries) do
    case do_batched_run(name, input, retries) do
      {:error, %Error{reason: :too_large} = e} ->
        case too_large_rows(e) do
          {rows, limit} -> split_run(name, input, rows, limit, retries)
          nil -> {:error, e}
        end

      other ->
        other
    end
  end

  # The serving's preprocess/2 checked the request before refusing it as too large, so every
  # input holds `rows` rows. A piece landing on a node whose serving has a smaller batch_size
  # is split again there (run_whole/3).
  #
  # A piece keeps the request's form, so the serving reads it as it read the whole: a list of
  # inputs stays a list, a batch a batch of the same entries (tensors, tuples or maps keyed by
  # input name), sliced. Batches are read once here (BatchStack.contents/1), not per piece.
  defp split_run(name, input, rows, limit, retries) do
    sliceable = if is_list(input), do: Enum.map(input, &sliceable/1), else: sliceable(input)

    for(start <- 0..(rows - 1)//limit, do: {start, min(limit, rows - start)})
    |> Task.async_stream(
      fn {start, n} ->
        piece =
          if is_list(sliceable),
            do: Enum.map(sliceable, &rows_of(&1, rows, start, n)),
            else: rows_of(sliceable, rows, start, n)

        {start, n, run_whole(name, piece, retries)}
      end,
      max_concurrency: @piece_concurrency,
      timeout: :infinity
    )
    |> Enum.reduce_while([], fn
      {:ok, {_start, _n, {:ok, outputs}}}, acc ->
        {:cont, [outputs | acc]}

      {:ok, {start, n, {:error, e}}}, _acc ->
        rows_named = "rows #{start}..#{start + n - 1} of the request's #{rows}: "
        {:halt, {:error, %{e | message: rows_named <> e.message}}}
    end)
    |> case do
      {:error, _} = error -> error
      acc -> {:ok, acc |> Enum.reverse() |> Enum.zip_with(&join_rows/1)}
    end
  end

  defp sliceable(%{__struct__: Nx.Batch} = batch), do: {:batch, BatchStack.contents(batch)}
  defp sliceable(other), do: other

  defp rows_of({:batch, contents}, _rows, start, n), do: BatchStack.rows(contents, start, n)

  defp rows_of(%{__struct__: Nx.Tensor} = t, _rows, start, n),
    do: Nx.slice_along_axis(t, start, n, axis: 0)

  defp rows_of(bin, rows, start, n) when is_binary(bin) do
    row_bytes = div(byte_size(bin), rows)
    binary_part(bin, start * row_bytes, n * row_bytes)
  end

  defp join_rows([bin | _] = bins) when is_binary(bin), do: IO.iodata_to_binary(bins)
  defp join_rows(tensors), do: Nx.concatenate(tensors)

  # The caller sees its request's node go down (its monitor fires) when :pg's scope process may
  # not have handled the nodedown yet: until it has, the dead node's members stay listed and
  # Nx.Serving's random pick may land on them again, on every retry. So a retry first waits,
  # at most this long, until every member sits on a connected node.
  @settle_ms 2_000

  defp do_batched_run(name, input, retries) do
    {:ok, Nx.Serving.batched_run(name, input)}
  rescue
    e in Error -> {:error, e}
    e -> {:error, Error.new(:serving_error, "#{inspect(name)}: #{Exception.message(e)}")}
  catch
    :exit, reason ->
      case exit_error(name, reason) do
        :retry when retries > 0 ->
          await_members_connected(@settle_ms)
          do_batched_run(name, input, retries - 1)

        :retry ->
          {:error, unavailable(name, "its node went down and no other node answered")}

        %Error{} = e ->
          {:error, e}
      end
  end

  defp await_members_connected(wait_ms) do
    nodes = [node() | Node.list(:connected)]
    stale? = Enum.any?(:pg.get_members(Nx.Serving.PG, Nx.Serving), &(node(&1) not in nodes))

    if stale? and wait_ms > 0 do
      Process.sleep(5)
      await_members_connected(wait_ms - 5)
    else
      :ok
    end
  end

  # What Nx.Serving exits with: {reason, {Nx.Serving, function, args}}. A request served on
  # another node that raised there exits with the exception.
  defp exit_error(name, {reason, {Nx.Serving, _fun, _args}}), do: exit_error(name, reason)
  defp exit_error(_name, {%Error{} = e, stack}) when is_list(stack), do: e
  defp exit_error(_name, :noconnection), do: :retry
  defp exit_error(_name, {:nodedown, _}), do: :retry

  defp exit_error({:local, _} = name, :noproc),
    do: unavailable(name, "no process serves it on this node")

  defp exit_error(name, :noproc), do: unavailable(name, "no process serves it on any node")

  defp exit_error(name, {e, stack}) when is_exception(e) and is_list(stack),
    do: Error.new(:serving_error, "#{inspect(name)}: #{Exception.message(e)}")

  defp exit_error(name, reason),
    do: Error.new(:serving_error, "#{inspect(name)}: the serving exited: #{inspect(reason)}")

  defp unavailable(name, why),
    do: Error.new(:unavailable, "Nx.Serving #{inspect(name)} is unavailable: #{why}")

  defp too_large_rows(%Error{reason: :too_large, details: %{rows: rows, batch_size: limit}}),
    do: {rows, limit}

  defp too_large_rows(_other), do: nil
end
