defmodule HexagonTpu.Graph.Batch do
  # The executes of HexagonTpu.Batching (predict_batch/3): a batch's chunks, of inputs already
  # prepared (`[{binary, dtype}]`, each binary `chunks` graph inputs one after another), run
  # in one telemetry span whose metadata also carries `meta` (`%{chunks: n, batch_size: rows}`),
  # either in one NIF call on a dirty IO scheduler (execute_chunks/6) or as submitted calls on
  # the graph's queue (submit_chunks/6). Either returns each output's `chunks` results in one
  # binary, in `out_types`; an error names the chunk it stopped at and its rows (`batch` rows
  # a chunk). Calls HexagonTpu.Graph.CallOptions, Dispatch and Tensors.
  @moduledoc false

  alias HexagonTpu.{Error, NIF}
  alias HexagonTpu.Graph.{CallOptions, Dispatch, Tensors}

  # Chunks in flight at once when a batch goes as one call per chunk (submit_each/6).
  @batch_in_flight 4

  @spec execute_chunks(
          HexagonTpu.Graph.t(),
          [{binary(), atom()}],
          [atom()],
          atom() | nil,
          pos_integer(),
          map()
        ) :: {:ok, [binary()], map()} | {:error, Error.t()}
  def execute_chunks(g, nif_inputs, out_types, perf_profile, batch, meta) do
    HexagonTpu.Telemetry.execute_span(
      g.name,
      fn ->
        # One batch in N of a sampled model carries a profile (of its first chunk), with the
        # options the unsampled batch has here (the perf vote; no :timeout or :priority on this
        # path, which the caller chose with scheduler: :dirty_io).
        case HexagonTpu.Profile.next(g) do
          nil ->
            NIF.graph_execute_batch(g.ref, nif_inputs, out_types, perf_profile, meta.chunks)

          prof ->
            g.ref
            |> NIF.graph_execute_profiled(
              nif_inputs,
              out_types,
              %{perf_profile: perf_profile},
              prof.profile_level,
              prof.profile_max_events,
              meta.chunks
            )
            |> HexagonTpu.Profile.take(g, meta.chunks)
        end
        |> span_result(g, batch, meta)
      end,
      meta
    )
  end

  # The same as execute_chunks/6 on the graph's queue, as submitted calls whose answers come
  # back as messages (no scheduler waits while the NPU computes): the whole batch as ONE call
  # with a batch multiple where the graph may take one (the core then runs one execute, or the
  # chunks in one turn if the graph refuses it now), else one call per chunk, @batch_in_flight
  # in flight, answers taken in chunk order. `o` holds the execute options (:timeout,
  # :priority, :perf_profile); a :timeout bounds the whole batch: each chunk is submitted with
  # what is left of it. The chunks still in flight after an error are cancelled.
  @spec submit_chunks(
          HexagonTpu.Graph.t(),
          [{binary(), atom()}],
          [atom()],
          map(),
          pos_integer(),
          map()
        ) :: {:ok, [binary()], map()} | {:error, Error.t()}
  def submit_chunks(g, nif_inputs, out_types, o, batch, meta) do
    %{chunks: chunks} = meta

    HexagonTpu.Telemetry.execute_span(
      g.name,
      fn ->
        timeout = Map.get(o, :timeout) || g.timeout

        deadline =
          if timeout, do: System.monotonic_time(:nanosecond) + CallOptions.timeout_ns(timeout)

        # one batch in N of a sampled model: its (first) call carries a profile
        o = Map.put(o, :profile, HexagonTpu.Profile.next(g))

        answer =
          if chunks == 1 or NIF.graph_batch_multiple(g.ref) in [:untried, :one_execute],
            do: submit_whole(g, nif_inputs, out_types, o, chunks),
            else: submit_each(g, nif_inputs, out_types, o, chunks, deadline)

        span_result(answer, g, batch, meta)
      end,
      meta
    )
  end

  # The span's fun returns the batch's result and, for the :stop event, the core's figures.
  # An error of a chunk ({:error, reason, chunk}) names the chunk and its rows.
  defp span_result({:error, nif_error, chunk}, g, batch, meta) do
    %{chunks: chunks, batch_size: rows} = meta
    {:error, e} = Tensors.wrap({:error, nif_error}, g)
    first = chunk * batch
    last = min(first + batch, rows) - 1
    where = "chunk #{chunk} of #{chunks}: rows #{first}..#{last} of #{rows}"
    {{:error, %{e | message: "#{e.message} (#{where})"}}, nil}
  end

  defp span_result(answer, g, _batch, _meta) do
    case Tensors.wrap(answer, g) do
      {:ok, _bins, stats} = ok -> {ok, stats}
      error -> {error, nil}
    end
  end

  # The NIF options of one submitted part of a batch: what is left of the batch's deadline.
  defp batch_submit_options(g, o, k, deadline) do
    opts = CallOptions.submit_options(g, o) |> Map.put(:batch_multiple, k)

    case deadline do
      nil ->
        {:ok, opts}

      d ->
        left = d - System.monotonic_time(:nanosecond)

        if left > 0,
          do: {:ok, %{opts | timeout_ns: left}},
          else:
            {:error,
             {:timeout,
              "graph '#{g.name}': the batch passed its #{div(CallOptions.timeout_ns(Map.get(o, :timeout) || g.timeout), 1_000_000)} ms deadline before this chunk was submitted",
              0, nil}}
    end
  end

  defp submit_whole(g, nif_inputs, out_types, o, chunks) do
    # submitted at once: the batch's whole timeout (the same deadline, give or take the
    # microseconds since it was taken)
    opts = CallOptions.submit_options(g, o) |> Map.put(:batch_multiple, chunks)

    answer =
      with {:ok, call, tag} <- submit_part(g, nif_inputs, out_types, opts) do
        receive do
          {:hexagon_tpu, ^tag, answer} ->
            answer |> HexagonTpu.Profile.take(g, chunks) |> Dispatch.with_stats(call)
        end
      end

    # A batch of one chunk: every error is that chunk's (as a chunked batch's would be).
    case answer do
      {:error, reason} when chunks == 1 -> {:error, reason, 0}
      other -> other
    end
  end

  defp submit_part(g, nif_inputs, out_types, opts) do
    tag = make_ref()

    case NIF.graph_submit(g.ref, nif_inputs, out_types, opts, tag) do
      {:ok, call} -> {:ok, call, tag}
      error -> error
    end
  end

  # One call per chunk, in order, @batch_in_flight at once.
  defp submit_each(g, nif_inputs, out_types, o, chunks, deadline) do
    parts = fn i -> for {bin, t} <- nif_inputs, do: {chunk_of(bin, i, chunks), t} end
    collect(g, parts, out_types, o, deadline, {0, chunks}, :queue.new(), [])
  end

  defp chunk_of(bin, i, chunks) do
    size = div(byte_size(bin), chunks)
    binary_part(bin, i * size, size)
  end

  # `next` the next chunk to submit, `q` the calls in flight ({chunk, call, tag}), `done` the
  # answers so far (last first).
  defp collect(g, parts, out_types, o, deadline, {next, chunks}, q, done) do
    if next < chunks and :queue.len(q) < @batch_in_flight do
      # a sampled batch's profile is its first chunk's
      o = if next == 0, do: o, else: Map.put(o, :profile, nil)

      submitted =
        with {:ok, opts} <- batch_submit_options(g, o, 1, deadline),
             do: submit_part(g, parts.(next), out_types, opts)

      case submitted do
        {:ok, call, tag} ->
          q = :queue.in({next, call, tag}, q)
          collect(g, parts, out_types, o, deadline, {next + 1, chunks}, q, done)

        {:error, reason} ->
          cancel_all(q)
          {:error, reason, next}
      end
    else
      case :queue.out(q) do
        {:empty, _} ->
          join_chunks(Enum.reverse(done))

        {{:value, {i, call, tag}}, q} ->
          answer =
            receive do
              {:hexagon_tpu, ^tag, answer} ->
                answer |> HexagonTpu.Profile.take(g, chunks) |> Dispatch.with_stats(call)
            end

          case answer do
            {:ok, bins, stats} ->
              collect(g, parts, out_types, o, deadline, {next, chunks}, q, [{bins, stats} | done])

            {:error, reason} ->
              cancel_all(q)
              {:error, reason, i}
          end
      end
    end
  end

  defp cancel_all(q) do
    for {_, call, tag} <- :queue.to_list(q) do
      if NIF.call_cancel(call) == :sent do
        receive do
          {:hexagon_tpu, ^tag, _} -> :ok
        end
      end
    end

    :ok
  end

  # Each output's chunks in order, one binary; the stats' figures summed over the chunks.
  defp join_chunks([{_, first} | _] = answers) do
    bins =
      answers
      |> Enum.map(&elem(&1, 0))
      |> Enum.zip_with(&IO.iodata_to_binary/1)

    stats =
      Enum.reduce(tl(answers), first, fn {_, st}, acc ->
        Map.merge(acc, st, fn
          _k, a, b when is_integer(a) and is_integer(b) -> a + b
          _k, a, _b -> a
        end)
      end)

    {:ok, bins, stats}
  end
end
