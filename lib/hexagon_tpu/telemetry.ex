defmodule HexagonTpu.Telemetry do
  @moduledoc ~S"""
  The `:telemetry` events hexagon_tpu emits. `:telemetry` is optional: the events are emitted
  when it is running (hexagon_tpu starts it, an optional application, when it is present) and
  cost nothing otherwise (no compile-time dependency).
  Names follow `:telemetry.span/3` and `Nx.Serving` (`:start` / `:stop` / `:exception`);
  durations are in `:native` time units (`System.convert_time_unit/3`).

  Like `:telemetry.span/3`, every `:start` is followed by exactly one `:stop` or `:exception`
  (the operation raised or threw; the exception is re-raised after the event), and the three
  carry the same `:telemetry_span_context` (a reference made for the span) in their metadata
  so handlers can pair them, also when calls overlap.

  ## Events

    * `[:hexagon_tpu, :execute, :start]` - an execute begins. Measurements:
      `%{monotonic_time: native, system_time: native}`. Metadata:
      `%{graph: name, telemetry_span_context: reference}`.

    * `[:hexagon_tpu, :execute, :stop]` - after every execute that returns
      (`HexagonTpu.predict/3`, `HexagonTpu.Graph.execute/3`), successful or not. Measurements:
        * `:duration` - on success, the QNN `graphExecute` time alone (native units, from the C
          core's `execute_ns`); on an error (`{:error, _}` returned: bad options or inputs,
          `:closed`, a QNN failure, ...), where no graphExecute time is known, the wall time
          of the whole call, the same as `:call_duration`
        * `:call_duration` - wall time of the whole call (validation, (de)quantization, NIF)
        * `:monotonic_time`
        * on success also `:execute_ns`, `:quantize_ns`, `:dequantize_ns`, `:total_ns` (the C
          call) and `:nif_ns` (the NIF), in nanoseconds

      Metadata: `%{graph: name, status: :ok | {:error, reason}, scheduler: :normal |
      :dirty_io | nil, telemetry_span_context: ref}`: `:scheduler` is where the call ran
      (`HexagonTpu.Graph.execute/3`'s `:scheduler`), `nil` when it returned an error.
      A `HexagonTpu.predict_batch/3` call (and so each batch of `HexagonTpu.Serving`) is one
      span for all its chunks' executes: its three events also carry `:batch_size` (the rows
      of the batch) and `:chunks` (graph-sized row groups), and the measurements cover them
      all (`:executes`: 1 when they ran as one execute with a batch multiple).

    * `[:hexagon_tpu, :execute, :exception]` - the execute raised or threw instead of
      returning (e.g. Nx failing on an output). Measurements: `%{duration, monotonic_time}`,
      `:duration` being the wall time until the exception. Metadata: `%{graph: name,
      telemetry_span_context: ref, kind: :error | :exit | :throw, reason: term, stacktrace:
      list}`. No `[:hexagon_tpu, :error]` event follows (that one is for returned errors).

    * `[:hexagon_tpu, :load, :start]` / `[:hexagon_tpu, :load, :stop]` /
      `[:hexagon_tpu, :load, :exception]` - a model load (`HexagonTpu.load_model/2`).
      `:start`: `%{monotonic_time, system_time}`; `:stop`: `%{duration, monotonic_time}`
      (native units; wall time of the load) with metadata `%{source: path | :binary |
      :invalid, graph: name | nil, status: :ok | {:error, reason}}` (`graph` is `nil` when
      the load failed); `:exception` (the load raised): `%{duration, monotonic_time}` with
      `%{kind, reason, stacktrace}` added to the metadata. All three also carry
      `:telemetry_span_context`.

      `HexagonTpu.load_models/2` loads its models in one call: it emits one such span per
      model of its list, each with `:list_index` (the model's place, from 0) and `:list_size`
      in its metadata. All start before the list load and stop after it with the same
      `:duration` (the list call's wall time); each `:stop` carries that model's own `:graph`
      and `:status`, and each model that failed gets its own `[:hexagon_tpu, :error]`. An
      error of the whole call (a bad option or source, found before anything loads) stops
      every model's span with that error; `sources` that are no list make one span with
      `source: :invalid`.

    * `[:hexagon_tpu, :error]` - any execute or load that returned an error. Measurements:
      `%{system_time: native}`. Metadata: `%{operation: :execute | :load, graph: name | nil,
      reason: atom, error: %HexagonTpu.Error{}}`.

    * `[:hexagon_tpu, :serving, :queue]` - the queue of a `HexagonTpu.Serving` changed, in
      rows. Measurements: `%{queue_length: rows, running: rows, rows: rows}`:
      `:queue_length` is the rows of checked requests not yet in a batch that runs (in the
      serving's mailbox, in the batch being filled, or in full batches waiting for a
      partition), `:running` the rows of batches handed to a partition and not finished
      (executing or waiting for the graph), `:rows` those of this change. Metadata:
      `%{graph: name, change: :request | :batch | :done | :reset, partition: i | nil}`:
      a request was queued (emitted in its caller), a batch was handed to partition `i`
      (in the serving process), a batch finished (in its task), the serving process started.
      See [docs/serving.md](docs/serving.md), Telemetry.

    * `[:hexagon_tpu, :stats]` - each `HexagonTpu.Monitor` tick; see that module.

    * `[:hexagon_tpu, :board, :throttling]` - `HexagonTpu.Monitor` found the NPU throttling
      itself: the NSP at or above its hot trip point, or a model's execute time risen while
      the NSP is hot. Emitted when a condition starts (as its log line), with the figures;
      see that module.

    * `[:hexagon_tpu, :model, :first_answer]` - a model answered for the first time since
      hexagon_tpu started (once per graph name). Measurements: `%{since_start: native,
      since_load: native}`: the time from the application's start, and from the end of the
      model's load, to that answer. Metadata: `%{graph: name}`. Emitted in the process that
      got the answer; `HexagonTpu.Stats.boot/0` has the same figures.

    * `[:hexagon_tpu, :profile]` - one execute in N of a model loaded with `profile_every: N`
      (`HexagonTpu.load_model/2`, `HexagonTpu.Serving.new/2`) carried a profile. Measurements:
      `%{accel_us:, accel_cycles:, host_rpc_us:, htp_rpc_us:, execute_ns:, total_ns:}` (the
      accelerator's and the RPC's figures from the backend, the host's from the C core).
      Metadata: `%{graph:, level:, ops: [%{index:, name:, us:, cycles:, share:}] (heaviest
      first), note:, chunks:, call_execute_ns:, profile: %HexagonTpu.Profile{}}`; see
      `HexagonTpu.Profile` (a sampled profile's `:events` is `nil`:
      `HexagonTpu.Profile.events/1` makes the tree when a handler wants it). Emitted in the
      process that made the call (for `HexagonTpu.predict_async/3` and
      `HexagonTpu.stream/3`: where the answer is awaited).

    * `[:hexagon_tpu, :profile, :dropped]` - a sampled execute succeeded (its outputs are
      returned as usual) but its profile could not be read back: the sample is lost, never the
      answer. Measurements: `%{count: 1}`. Metadata: `%{graph:, level:, error:
      %HexagonTpu.Error{}}` (why the read failed). Also counted in `HexagonTpu.stats/0`
      (`:profiles_dropped`) and logged once per model (a warning).

  ## Example

      defmodule MyApp.SlowInference do
        def attach(limit_ms) do
          :telemetry.attach(
            "log-slow-inference",
            [:hexagon_tpu, :execute, :stop],
            &__MODULE__.handle/4,
            limit_ms
          )
        end

        def handle(_event, %{duration: d}, %{graph: graph, status: status}, limit_ms) do
          ms = System.convert_time_unit(d, :native, :microsecond) / 1000
          if ms > limit_ms, do: IO.puts("#{graph}: graphExecute took #{ms} ms (#{inspect(status)})")
        end
      end

  The handler is a function of a module (`&Module.fun/4`), not a closure: `:telemetry` calls
  those most cheaply and logs a note for a closure.

  A handler that raises is detached by `:telemetry` (and logged); it never fails the execute.
  """

  @compile {:no_warn_undefined, [:telemetry]}

  @doc """
  Is `:telemetry` running (so events are emitted)? hexagon_tpu starts it (an optional
  application) when it is present. Loadable but not started, `:telemetry.execute/3` would log
  "Failed to lookup telemetry handlers" on every call: then nothing is emitted, silently.

  ## Examples

      iex> started? = List.keymember?(Application.started_applications(), :telemetry, 0)
      iex> HexagonTpu.Telemetry.enabled?() == started?
      true
  """
  @spec enabled?() :: boolean()
  def enabled? do
    # The handler table is the ETS table `telemetry_handler_table` (named after its owner
    # module, in :telemetry 0.4 and 1.x): it exists exactly while the application runs, and it
    # is what :telemetry.execute/3 looks up. One ETS lookup, no message to any process.
    HexagonTpu.Optional.available?(:telemetry) and
      :ets.whereis(:telemetry_handler_table) != :undefined
  end

  @doc false
  # Not a user API: the span of HexagonTpu.Graph.execute/3 and predict_batch/3, which hand
  # their stats to this function beside the result.
  # Runs an execute between `[:hexagon_tpu, :execute, :start]` and `:stop` (plus
  # `[:hexagon_tpu, :error]` for a returned error), or `:exception` if it raises, throws or
  # exits (then re-raised with its stacktrace). `fun` returns `{result, stats}`: what the call
  # returns (`{:ok, ...}` or `{:error, %HexagonTpu.Error{}}`) and the C core's figures for the
  # `:stop` measurements (`nil` when there are none); `result` is returned as it is. For
  # `HexagonTpu.Graph.execute/3`; `extra_meta` is added to the three events' metadata
  # (`HexagonTpu.predict_batch/3` adds `:batch_size` and `:chunks`).
  @spec execute_span(String.t(), (() -> {result, map() | nil}), map()) :: result
        when result: term()
  def execute_span(graph, fun, extra_meta \\ %{}) when is_function(fun, 0) do
    # a model's first answer and, for a monitor, its execute times (HexagonTpu.Ledger)
    fun = HexagonTpu.Ledger.watch_execute(graph, fun)
    span([:hexagon_tpu, :execute], Map.put(extra_meta, :graph, graph), fun, &execute_stop/3)
  end

  # The :stop event's measurements and metadata. On success `:duration` is graphExecute's time
  # (the C core's execute_ns); otherwise no graphExecute time is known: the call's.
  defp execute_stop(result, stats, call) do
    {measurements, status} =
      case result do
        {:error, %{reason: reason}} -> {%{duration: call}, {:error, reason}}
        ok when elem(ok, 0) == :ok -> {exec_measurements(stats, call), :ok}
        _ -> {%{duration: call}, {:error, :unknown}}
      end

    # Where the call ran, and the shapes of outputs with dynamic dimensions, are metadata, not
    # measurements.
    {scheduler, measurements} = Map.pop(measurements, :scheduler)
    {shapes, measurements} = Map.pop(measurements, :output_shapes)
    meta = %{status: status, scheduler: scheduler}
    meta = if shapes, do: Map.put(meta, :output_shapes, shapes), else: meta

    {Map.put(measurements, :call_duration, call), meta}
  end

  defp exec_measurements(%{execute_ns: ns} = stats, _call) when is_integer(ns),
    do: Map.put(stats, :duration, System.convert_time_unit(ns, :nanosecond, :native))

  defp exec_measurements(stats, call) when is_map(stats), do: Map.put(stats, :duration, call)
  defp exec_measurements(_stats, call), do: %{duration: call}

  @doc false
  # Not a user API (as execute_span/3): the span of HexagonTpu.load_model/2.
  # Runs a model load (`fun` returns `{:ok, %HexagonTpu.Graph{}}` or `{:error, error}`) between
  # `[:hexagon_tpu, :load, :start]` and `:stop` (or `:exception` if it raises, then re-raised);
  # returns its result unchanged. `metadata` should hold `:source`.
  @spec load_span(map(), (() -> result)) :: result when result: term()
  def load_span(metadata, fun) when is_map(metadata) and is_function(fun, 0),
    do: load_spans([metadata], fun, &[&1])

  @doc false
  # Not a user API: the spans of HexagonTpu.load_models/2, one per model (`metadatas`, in the
  # list's order), around the one list load `fun` (which returns `{:ok, [result]}`, a result
  # per model, or `{:error, error}` for the whole call). Each model's :stop (and
  # [:hexagon_tpu, :error]) is its own result's; each model's load time, the list call's.
  @spec list_load_span([map()], (() -> result)) :: result when result: term()
  def list_load_span([_ | _] = metadatas, fun) when is_function(fun, 0) do
    n = length(metadatas)
    load_spans(metadatas, fun, &per_model(&1, n))
  end

  defp per_model({:ok, results}, n) when is_list(results) and length(results) == n, do: results
  defp per_model(whole_call, n), do: List.duplicate(whole_call, n)

  # `split` turns what `fun` returned into one result per span.
  defp load_spans(metadatas, fun, split) do
    # every load's time, telemetry or not, for HexagonTpu.Stats.boot/0 (HexagonTpu.Ledger)
    timed = fn ->
      t0 = System.monotonic_time()
      result = fun.()
      duration = System.monotonic_time() - t0
      for {:ok, %{name: name}} <- split.(result), do: HexagonTpu.Ledger.loaded(name, duration)
      {result, nil}
    end

    spans([:hexagon_tpu, :load], metadatas, timed, fn result, nil, call ->
      Enum.zip_with(metadatas, split.(result), fn meta, one ->
        {%{duration: call}, load_stop(meta, one), one}
      end)
    end)
  end

  defp load_stop(meta, result) do
    {graph, status} =
      case result do
        {:ok, %{name: name}} -> {name, :ok}
        {:ok, _} -> {nil, :ok}
        {:error, %{reason: reason}} -> {Map.get(meta, :graph), {:error, reason}}
        _ -> {Map.get(meta, :graph), {:error, :unknown}}
      end

    %{graph: graph, status: status}
  end

  # One span, in the style of :telemetry.span/3 (see spans/4).
  defp span(prefix, meta, fun, stop) do
    spans(prefix, [meta], fun, fn result, info, call ->
      {measurements, stop_meta} = stop.(result, info, call)
      [{measurements, stop_meta, result}]
    end)
  end

  # Spans in the style of :telemetry.span/3, one per entry of `metas`, around one call: each
  # `prefix ++ [:start]`, then `fun` (which returns {result, info}) and each `prefix ++ [:stop]`
  # with what `stop.(result, info, duration)` gives for it ({measurements, metadata, its own
  # result}), and [:hexagon_tpu, :error] for its own returned error; or each
  # `prefix ++ [:exception]` if `fun` raises, throws or exits, re-raised. Returns `result`.
  # Without :telemetry running, just `fun`.
  defp spans([_, operation] = prefix, metas, fun, stop) do
    if enabled?() do
      start = System.monotonic_time()
      metas = Enum.map(metas, &Map.put(&1, :telemetry_span_context, make_ref()))
      started = %{monotonic_time: start, system_time: System.system_time()}
      Enum.each(metas, &emit(prefix ++ [:start], started, &1))

      try do
        fun.()
      catch
        kind, reason ->
          now = System.monotonic_time()
          raised = %{kind: kind, reason: reason, stacktrace: __STACKTRACE__}

          Enum.each(metas, fn meta ->
            emit(
              prefix ++ [:exception],
              %{duration: now - start, monotonic_time: now},
              Map.merge(meta, raised)
            )
          end)

          :erlang.raise(kind, reason, __STACKTRACE__)
      else
        {result, info} ->
          now = System.monotonic_time()

          Enum.zip_with(metas, stop.(result, info, now - start), fn meta, {m, stop_meta, own} ->
            meta = Map.merge(meta, stop_meta)
            emit(prefix ++ [:stop], Map.put(m, :monotonic_time, now), meta)

            with {:error, %{reason: reason} = error} <- own do
              error(operation, meta.graph, reason, error)
            end
          end)

          result
      end
    else
      {result, _info} = fun.()
      result
    end
  end

  @doc false
  # [:hexagon_tpu, :error] for an execute or load that returned an error.
  @spec error(:execute | :load, String.t() | nil, atom(), term()) :: :ok
  def error(operation, graph, reason, error) do
    emit(
      [:hexagon_tpu, :error],
      %{system_time: System.system_time()},
      %{operation: operation, graph: graph, reason: reason, error: error}
    )
  end

  @doc false
  # [:hexagon_tpu, :serving, :queue] from HexagonTpu.Serving (HexagonTpu.Serving.Queue).
  @spec serving_queue(map(), map()) :: :ok
  def serving_queue(measurements, metadata),
    do: emit([:hexagon_tpu, :serving, :queue], measurements, metadata)

  @doc false
  # [:hexagon_tpu, :profile] from a sampled execute (HexagonTpu.Profile).
  @spec profile(map(), map()) :: :ok
  def profile(measurements, metadata), do: emit([:hexagon_tpu, :profile], measurements, metadata)

  @doc false
  # [:hexagon_tpu, :profile, :dropped] from a sampled execute whose profile could not be read.
  @spec profile_dropped(map(), map()) :: :ok
  def profile_dropped(measurements, metadata),
    do: emit([:hexagon_tpu, :profile, :dropped], measurements, metadata)

  @doc false
  # [:hexagon_tpu, :stats] from HexagonTpu.Monitor.
  @spec stats(map(), map()) :: :ok
  def stats(measurements, metadata), do: emit([:hexagon_tpu, :stats], measurements, metadata)

  @doc false
  # [:hexagon_tpu, :board, :throttling] from HexagonTpu.Monitor.
  @spec board_throttling(map(), map()) :: :ok
  def board_throttling(measurements, metadata),
    do: emit([:hexagon_tpu, :board, :throttling], measurements, metadata)

  @doc false
  # [:hexagon_tpu, :model, :first_answer] from HexagonTpu.Ledger.
  @spec first_answer(map(), map()) :: :ok
  def first_answer(measurements, metadata),
    do: emit([:hexagon_tpu, :model, :first_answer], measurements, metadata)

  # :telemetry.execute/3 already isolates handler failures; the catch-all keeps a broken
  # :telemetry (or one stopping at this very moment) from ever failing a caller.
  defp emit(event, measurements, metadata) do
    if enabled?() do
      try do
        :telemetry.execute(event, measurements, metadata)
      catch
        _, _ -> :ok
      end
    end

    :ok
  end
end
