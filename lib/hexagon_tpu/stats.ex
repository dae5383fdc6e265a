defmodule HexagonTpu.Stats do
  @moduledoc """
  Observability readings: the C library's counters, how busy the dirty schedulers are
  (inference runs there) and memory. All cheap except the dirty schedulers' utilization,
  which waits for its window.

      HexagonTpu.Stats.native()
      #=> %{live_graphs: 2, live_contexts: 1, live_runtimes: 1, executes: 1234,
      #=>   execute_ns_last: 1_850_000, ...}

      HexagonTpu.Stats.dirty_utilization(1_000)
      #=> %{dirty_cpu: 0.03, dirty_io: 0.72, window_ms: 1000}

      HexagonTpu.Stats.memory()
      #=> %{binary: 1_234_567, total: 45_678_901, rss: 98_304_000}

  `HexagonTpu.Monitor` takes these readings periodically, emits them as telemetry and warns
  about handle or memory growth and saturated dirty schedulers.

  ## Leak guard

  `:live_runtimes`, `:live_contexts` and `:live_graphs` count the C handles alive in the
  process. A handle dropped without `close/1` is closed after garbage collection (by the NIF's
  reaper thread), so after a GC the counts return to their baseline; counts that keep growing
  mean references are being kept somewhere.
  """

  alias HexagonTpu.NIF

  @typedoc "The C counters; see `native/0`."
  @type native :: %{atom() => non_neg_integer()}

  @typedoc "Busy share (0.0..1.0) of each dirty scheduler type over `window_ms`."
  @type utilization :: %{dirty_cpu: float(), dirty_io: float(), window_ms: pos_integer()}

  @typedoc "Bytes: BEAM binary and total memory, OS resident set (`nil` when unknown)."
  @type memory :: %{
          binary: non_neg_integer(),
          total: non_neg_integer(),
          rss: non_neg_integer() | nil
        }

  @live_keys [:live_runtimes, :live_contexts, :live_graphs]

  @doc """
  The C library's process-wide counters (`htpu_stats_get`) and the NIF reaper's, as a map.
  Runs on a normal scheduler and takes about a microsecond.

    * `:live_runtimes`, `:live_contexts`, `:live_graphs` - handles alive now (the leak guard:
      back to baseline after garbage collection)
    * `:live_shared_buffers`, `:mem_registrations` - shared (rpcmem) buffers alive, memory
      registrations made
    * `:executes`, `:execute_errors` - graph executes that succeeded / failed
    * `:execute_ns_total`, `:execute_ns_last` - QNN `graphExecute` time alone (no
      (de)quantization, no NIF), summed and of the last execute
    * `:loads`, `:load_ns_total` - context loads and their time
    * `:quantize_ns_total`, `:dequantize_ns_total` - time spent converting f32 inputs and
      outputs
    * `:recoveries`, `:recovery_failures` - recoveries after a DSP subsystem restart
    * `:startup_retries` - backend/device creation retries
    * `:executes_in_flight` - executes inside the backend's `graphExecute` right now;
      `:executes_waiting` - executes queued behind another execute of the same graph (a
      model called by more processes than it can serve)
    * `:executes_cancelled` - queued executes skipped when their turn came because the
      calling process had been killed meanwhile (not counted in `:executes`)
    * `:reaper_queued`, `:reaper_closed`, `:reaper_inline` - handles dropped by GC and queued
      for closing, closed by the reaper, closed inline
    * `:executes_normal`, `:executes_dirty_io` - `HexagonTpu.Graph.execute/3` calls answered
      on a normal scheduler / on a dirty IO scheduler (see its `:scheduler` option)
    * `:normal_declined_busy`, `:normal_declined_not_short`, `:normal_declined_resource`,
      `:normal_declined_other` - calls tried on a normal scheduler that moved to a dirty one:
      the graph (or the execute gate) was held by another call; the graph's recent calls were
      unknown or long (`:auto`); a conversion block had to be allocated or a buffer
      registered with the DSP (the dirty call does it, once per block); inputs and outputs
      over 64 KiB, a per-call profile vote or a DSP-restart recovery
    * `:executes_declined` - the C core's no-wait executes that declined rather than wait
      (the sum of the four above but the size bound, which the NIF checks itself)
    * `:gate_writers` - context loads, frees and DSP recoveries holding the process-wide
      execute gate or waiting for it now: executes wait behind them (at most 100 ms behind a
      waiting one, or until their deadline behind one that holds it)
    * `:frees_deferred` - closes of models, contexts, runtimes or shared IO whose free could
      not have the execute gate at once (an execute in flight was stuck) and was done later on
      a thread of the core's: the close returned at once
    * `:worker_threads` - the models' worker threads alive now (two per model with submitted
      calls; they exit about a second after its last, so idle models hold none)
    * `:batch_multiple_executes`, `:batch_multiple_refusals` - batches run as one execute with
      a batch multiple (`HexagonTpu.predict_batch/3`, `HexagonTpu.Serving`), and single
      executes a graph refused (its batches then run as one execute per chunk)

  The same map as `HexagonTpu.stats/0`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> before = HexagonTpu.Stats.native()
      iex> {:error, _} = HexagonTpu.predict(model, [<<0::128>>, <<0::64>>])
      iex> {:ok, _} = HexagonTpu.predict(model, [<<0::128>>, <<0::128>>])
      iex> after_calls = HexagonTpu.Stats.native()
      iex> {after_calls.executes - before.executes, after_calls.live_graphs >= 1}
      {1, true}
  """
  @spec native() :: native()
  def native, do: NIF.stats()

  @doc """
  The sum of the live runtime, context and graph counts of `native/0` (or of the given
  counters).

  ## Examples

      iex> HexagonTpu.Stats.live_handles(%{live_runtimes: 1, live_contexts: 2, live_graphs: 3, executes: 40})
      6
      iex> HexagonTpu.Stats.live_handles() >= 0
      true
  """
  @spec live_handles(native()) :: non_neg_integer()
  def live_handles(native \\ native()) do
    Enum.reduce(@live_keys, 0, fn key, acc -> acc + Map.get(native, key, 0) end)
  end

  @doc """
  The busy share of the dirty CPU and dirty IO schedulers over the next `window_ms`
  milliseconds (blocks the caller that long).

  Each value is the time the schedulers of that type spent running work (a dirty NIF, e.g. an
  execute, counts as busy for its whole duration, including time it spends waiting for the
  DSP or for a lock) divided by their wall time, averaged over the schedulers of the type:
  `dirty_io: 0.5` with 10 dirty IO schedulers is five of them occupied on average. It measures
  occupancy, not CPU use; values near 1.0 mean new dirty calls queue. A type with no
  schedulers reads `0.0`.

  Uses `:erlang.statistics(:scheduler_wall_time_all)`. The `scheduler_wall_time` flag is
  enabled for the caller only while measuring and then released: the flag is counted per
  process, so if it was off it is off again afterwards (also if the caller dies meanwhile), and
  if other code had it on, its readings are not disturbed (nothing is reset). Works on OTP 21
  and later; no `:runtime_tools` needed.

  ## Examples

      iex> %{dirty_cpu: cpu, dirty_io: io, window_ms: 20} = HexagonTpu.Stats.dirty_utilization(20)
      iex> cpu >= 0.0 and cpu <= 1.0 and io >= 0.0 and io <= 1.0
      true
      iex> HexagonTpu.Stats.dirty_utilization(0)
      ** (ArgumentError) HexagonTpu.Stats.dirty_utilization/1: expected a window in milliseconds (positive integer), got 0
  """
  @spec dirty_utilization(pos_integer()) :: utilization()
  def dirty_utilization(window_ms) when is_integer(window_ms) and window_ms > 0 do
    _was_on = :erlang.system_flag(:scheduler_wall_time, true)

    try do
      first = :erlang.statistics(:scheduler_wall_time_all)
      Process.sleep(window_ms)
      second = :erlang.statistics(:scheduler_wall_time_all)
      utilization(first, second) |> Map.put(:window_ms, window_ms)
    after
      # Decrements this process's count: the node-wide flag goes back to what it was.
      :erlang.system_flag(:scheduler_wall_time, false)
    end
  end

  def dirty_utilization(other) do
    raise ArgumentError,
          "HexagonTpu.Stats.dirty_utilization/1: expected a window in milliseconds " <>
            "(positive integer), got #{inspect(other)}"
  end

  @doc false
  # Busy share per dirty type between two scheduler_wall_time_all samples. Scheduler ids:
  # 1..S normal, S+1..S+DC dirty CPU, then dirty IO (erlang:statistics/1).
  @spec utilization(list() | :undefined, list() | :undefined) :: %{
          dirty_cpu: float(),
          dirty_io: float()
        }
  def utilization(first, second) when is_list(first) and is_list(second) do
    normal = :erlang.system_info(:schedulers)
    dirty_cpu = :erlang.system_info(:dirty_cpu_schedulers)
    before = Map.new(first, fn {id, active, total} -> {id, {active, total}} end)

    {cpu, io} =
      Enum.reduce(second, {{0, 0}, {0, 0}}, fn {id, active, total}, {cpu, io} ->
        {a0, t0} = Map.get(before, id, {0, 0})
        delta = {active - a0, total - t0}

        cond do
          id <= normal -> {cpu, io}
          id <= normal + dirty_cpu -> {add(cpu, delta), io}
          true -> {cpu, add(io, delta)}
        end
      end)

    %{dirty_cpu: share(cpu), dirty_io: share(io)}
  end

  def utilization(_first, _second), do: %{dirty_cpu: 0.0, dirty_io: 0.0}

  defp add({a, t}, {da, dt}), do: {a + da, t + dt}
  defp share({_active, total}) when total <= 0, do: 0.0
  defp share({active, total}), do: min(max(active / total, 0.0), 1.0)

  @doc """
  BEAM and OS memory, in bytes.

    * `:binary` - `:erlang.memory(:binary)`: refc binaries, where outputs live
    * `:total` - `:erlang.memory(:total)`: everything the BEAM allocated
    * `:rss` - the OS process's resident memory (BEAM plus native allocations: QNN, the
      reference backend, shared buffers) from `/proc/self/statm` times the page size on Linux;
      `nil` elsewhere or when it cannot be read

  Costs a few microseconds (one small `/proc` read).

  ## Examples

      iex> %{binary: binary, total: total, rss: rss} = HexagonTpu.Stats.memory()
      iex> binary < total and (rss == nil or rss > 0)
      true
  """
  @spec memory() :: memory()
  def memory do
    [binary: binary, total: total] = :erlang.memory([:binary, :total])
    %{binary: binary, total: total, rss: rss()}
  end

  @typedoc "A reading of the board; see `board/1`."
  @type board :: %{
          nsp: map(),
          cpu: map(),
          zones: [map()],
          cpufreq: [map()],
          npu_busy: float() | nil,
          executes_per_s: float() | nil,
          interval_ms: float() | nil,
          notes: [String.t()],
          counters: %{
            at_ns: non_neg_integer(),
            executes: non_neg_integer(),
            execute_ns_total: non_neg_integer()
          }
        }

  @doc """
  The board's state as figures: the NPU subsystem's (NSP) temperature against its hot trip
  point, the CPU's temperature, every thermal zone with its trip points, every cpufreq
  policy's governor and frequency, and the NPU's busy share and executes per second since
  the previous reading (from this process's own execute times: the kernel has no busy counter
  for the NPU). Reads a few hundred small sysfs files on a dirty IO scheduler: a few
  milliseconds on a board.

    * `:nsp` - `%{state:, temp_c:, hot_c:, zone:, hot:}`: the hottest NSP zone
      (`nspss0-thermal`, `nspss1-thermal`) and its type, the lowest hot trip point of the NSP
      zones (a `hot` trip, else a `passive` one; 90.0 on QCS6490), and whether the NSP is at or
      above it (where the NPU throttles itself, unseen by Linux's cooling devices)
    * `:cpu` - `%{state:, temp_c:}`: the hottest CPU zone
    * `:zones` - every thermal zone in zone order: `%{zone:, type:, kind: :nsp | :cpu |
      :other, state:, temp_c:, note:, hot_c:, critical_c:, trips: [%{type:, temp_c:, state:}],
      trips_skipped:}` (the first 12 trip points are listed; `trips_skipped` counts the rest,
      which `hot_c` and `critical_c` still take into account, and `:notes` says so)
    * `:cpufreq` - every policy: `%{policy:, cpus: [integer], governor:, governor_state:,
      cur_mhz:, cur_state:, min_mhz:, max_mhz:, hw_min_mhz:, hw_max_mhz:, note:}`
    * `:npu_busy` (0.0..1.0), `:executes_per_s`, `:interval_ms` - since `:since`, else since
      the previous `board/1` on this node; `nil` for the first
    * `:notes` - what could not be read at all (no thermal zones, no cpufreq), or not all
      (zones, policies or trip points past what a reading holds)
    * `:counters` - the execute counters and time of this reading (what `:since` takes)

  Every value is checked before it is trusted: `state` is `:ok`, `:missing` (no such file),
  `:unreadable` (there, but not a readable regular file: a FIFO is refused, never waited on)
  or `:absurd` (not a number, a temperature outside -40..150 °C, a frequency of 0), and the
  value is then `nil` with a `note` saying which file and why. Temperatures are °C, frequencies
  MHz.

  ## Options

    * `:root` - a directory standing in for `/` (a copy of a board's tree, a test's fake one);
      default: the application environment's `:board_root`, else `/`
    * `:since` - an earlier reading of this process (`board/1`'s result: its `:counters`,
      three non-negative integers) to measure the NPU's load from

  Raises `ArgumentError` for an invalid option or a root that is not a directory.

  ## Examples

      iex> root = Path.join(System.tmp_dir!(), "hexagon_tpu_board_doc")
      iex> zone = Path.join(root, "sys/class/thermal/thermal_zone12")
      iex> File.mkdir_p!(zone)
      iex> for {f, v} <- [type: "nspss0-thermal", temp: "61500", trip_point_0_type: "hot",
      ...>                trip_point_0_temp: "90000"], do: File.write!(Path.join(zone, "\#{f}"), v)
      iex> board = HexagonTpu.Stats.board(root: root)
      iex> board.nsp
      %{state: :ok, temp_c: 61.5, hot_c: 90.0, zone: "nspss0-thermal", hot: false}
      iex> {board.cpu.state, board.cpufreq, hd(board.notes)}
      {:missing, [], "no cpufreq policies: '\#{root}/sys/devices/system/cpu/cpufreq' cannot be opened: No such file or directory"}
      iex> later = HexagonTpu.Stats.board(root: root, since: board)
      iex> later.npu_busy >= 0.0 and later.interval_ms > 0
      true
  """
  @spec board(keyword()) :: board()
  def board(opts \\ []) do
    {root, since} = board_options(opts)

    case NIF.board_read(root) do
      {:ok, raw} ->
        reading = HexagonTpu.Stats.Board.from_nif(raw)
        previous = if since, do: since.counters, else: HexagonTpu.Ledger.last_board()
        HexagonTpu.Ledger.put_last_board(reading.counters)
        HexagonTpu.Stats.Board.with_load(reading, previous)

      {:error, _} = error ->
        {:error, e} = HexagonTpu.Error.wrap(error)
        raise ArgumentError, "HexagonTpu.Stats.board/1: #{e.message}"
    end
  end

  defp board_options(opts) do
    if not Keyword.keyword?(opts),
      do:
        raise(
          ArgumentError,
          "HexagonTpu.Stats.board/1: expected a keyword list, got #{inspect(opts)}"
        )

    with {:error, e} <- HexagonTpu.Options.given_once(opts, "HexagonTpu.Stats.board/1"),
         do: raise(ArgumentError, e.message)

    root = Keyword.get(opts, :root, Application.get_env(:hexagon_tpu, :board_root))
    since = Keyword.get(opts, :since)

    for {k, _} <- opts,
        k not in [:root, :since],
        do:
          raise(
            ArgumentError,
            "HexagonTpu.Stats.board/1: unknown option #{inspect(k)} (known options: :root, :since)"
          )

    if not (is_nil(root) or (is_binary(root) and root != "" and not String.contains?(root, <<0>>))),
      do:
        raise(
          ArgumentError,
          "HexagonTpu.Stats.board/1: expected :root to be a directory (a string without NUL bytes) or nil, got #{inspect(root)}"
        )

    if not (is_nil(since) or since_counters?(since)),
      do:
        raise(
          ArgumentError,
          "HexagonTpu.Stats.board/1: expected :since to be an earlier board/1 reading (its :counters :at_ns, :executes and :execute_ns_total non-negative integers) or nil, got #{inspect(since, limit: 5)}"
        )

    {root, since}
  end

  # The counters a reading carries: three non-negative integers (what busy share and rate are
  # computed from; anything else would fail in the arithmetic, not here).
  defp since_counters?(%{counters: %{at_ns: t, executes: e, execute_ns_total: ns}}),
    do: Enum.all?([t, e, ns], &(is_integer(&1) and &1 >= 0))

  defp since_counters?(_since), do: false

  @typedoc "Boot to first answer; see `boot/0`."
  @type boot :: %{
          started_at: DateTime.t() | nil,
          vm_uptime_ms_at_start: non_neg_integer() | nil,
          uptime_ms: float() | nil,
          models: %{String.t() => map()}
        }

  @doc """
  Boot to first answer: when hexagon_tpu started, and for each model (by graph name) how long
  its load took and how long after the start it gave its first answer. A box that loses power
  and boots again cares how soon it answers; `[:hexagon_tpu, :model, :first_answer]` carries
  the same figure as it happens.

    * `:started_at` - when the application started (UTC), `:vm_uptime_ms_at_start` how long the
      VM had run by then (the VM's own start is that much earlier), `:uptime_ms` how long ago
      the application started
    * `:models` - `%{name => %{loads:, load_ms:, first_loaded_ms:, first_answer_ms:,
      answer_after_load_ms:}}`: loads since the start (by `HexagonTpu.load_model/2` or as one
      of a `HexagonTpu.load_models/2` list), the last load's time (of a list, the list
      call's), when the first load ended, when the first answer came (both in ms since the start; `nil` before it),
      and the time from the end of the first load to it

  Without the application started (the code merely on the path) nothing is recorded: `nil`
  and `%{}`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, _} = HexagonTpu.predict(model, [<<0::128>>, <<0::128>>])
      iex> %{started_at: %DateTime{}, models: %{"add_f32" => m}} = HexagonTpu.Stats.boot()
      iex> m.first_answer_ms >= m.first_loaded_ms and m.load_ms > 0 and m.loads >= 1
      true
  """
  @spec boot() :: boot()
  def boot, do: HexagonTpu.Stats.Board.boot()

  @doc false
  @spec rss() :: non_neg_integer() | nil
  def rss do
    with {:unix, :linux} <- :os.type(),
         {:ok, statm} <- File.read("/proc/self/statm"),
         [_size, resident | _] <- String.split(statm),
         {pages, ""} <- Integer.parse(resident),
         size when is_integer(size) <- page_size() do
      pages * size
    else
      _ -> nil
    end
  end

  # The page size from the ELF auxiliary vector (AT_PAGESZ = 6): native-endian pairs of
  # machine words. Read once; 4096 if it cannot be read.
  defp page_size do
    case :persistent_term.get({__MODULE__, :page_size}, nil) do
      nil ->
        size = read_page_size() || 4096
        :persistent_term.put({__MODULE__, :page_size}, size)
        size

      size ->
        size
    end
  end

  defp read_page_size do
    bits = :erlang.system_info({:wordsize, :external}) * 8

    with {:ok, auxv} <- File.read("/proc/self/auxv") do
      Enum.find_value(
        for(<<type::native-size(bits), value::native-size(bits) <- auxv>>, do: {type, value}),
        fn
          {6, value} when value > 0 -> value
          _ -> nil
        end
      )
    else
      _ -> nil
    end
  end
end
