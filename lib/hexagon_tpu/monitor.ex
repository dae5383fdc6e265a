defmodule HexagonTpu.Monitor do
  @moduledoc """
  A process for your supervision tree that watches hexagon_tpu in production: every interval
  it reads `HexagonTpu.Stats` (C counters, memory, dirty scheduler utilization, the board's
  temperatures, clocks and the NPU's load), emits them as the `[:hexagon_tpu, :stats]`
  telemetry event (when `:telemetry` is running) and logs a warning when

    * a live handle count (`:live_runtimes`, `:live_contexts`, `:live_graphs`,
      `:live_shared_buffers`) or a memory figure (BEAM `:binary`, BEAM `:total`, OS `:rss`)
      grew at every one of the last `:intervals` ticks, by at least the minimum growth in
      total: references to models or outputs are being kept somewhere (a leak); handles
      dropped without `close/1` go back after garbage collection, so steady use stays flat;
    * the dirty CPU or dirty IO schedulers were busy at least `:saturation_threshold` of the
      measuring window at each of the last `:intervals` ticks: executes are queueing for a
      dirty scheduler;
    * the NSP (the NPU's subsystem) is at or above its hot trip point (`:nsp_hot`), where the
      NPU throttles itself unseen by Linux's cooling devices; and, while it is, a model's mean
      execute time over the tick is `:slowdown` (15 %) or more above its mean on a cool board
      (`:throttling`; a model that never ran cool is compared with its first measured tick).
      Both also emit `[:hexagon_tpu, :board, :throttling]` with the figures: measurements
      `:temp_c`, `:hot_c` and `:clears_below_c`, `:npu_busy`, `:executes_per_s` (NSP) or
      `:execute_ms`,
      `:baseline_ms`, `:rise` (a model); metadata `%{reason: :nsp_hot | :execute_slower, zone:,
      graph:, monitor:, board:}` (`board` the whole `HexagonTpu.Stats.board/1` reading).

  A warning is logged when its condition starts to hold and again only after it has cleared;
  the current ones are always in `last_report/1`. The NSP's heat clears only once it has fallen
  more than `:hot_hysteresis_c` (3 °C) below the hot threshold, so a zone hovering at its trip
  point (90.1, 89.9, 90.1 °C) is one warning, not one every other tick.

  A `:board_root` that is not a directory is refused at the start, like any bad option. When
  the board cannot be read later (its root went away), each tick's report has `board: nil` and
  the reason in `:board_error`, and a warning is logged once, when the readings start failing
  (again after they recovered).

  ## Example

      children = [
        {HexagonTpu.Monitor, interval_ms: 30_000}
      ]

      Supervisor.start_link(children, strategy: :one_for_one)

      HexagonTpu.Monitor.last_report()
      #=> %{native: %{live_graphs: 2, executes: 10_523, ...}, live_handles: 4,
      #=>   memory: %{binary: 2_301_992, total: 41_090_112, rss: 96_866_304},
      #=>   dirty_utilization: %{dirty_cpu: 0.0, dirty_io: 0.41, window_ms: 1000},
      #=>   board: %{nsp: %{temp_c: 71.5, hot_c: 90.0, hot: false, ...}, npu_busy: 0.62,
      #=>            executes_per_s: 29.8, cpufreq: [...], ...}, board_error: nil,
      #=>   warnings: [], tick: 42, at: ~U[2025-01-01 12:00:00Z], cost_us: 2950}

  ## Telemetry

  `[:hexagon_tpu, :stats]`, once per tick. Measurements (numbers): every counter of
  `HexagonTpu.Stats.native/0`, `:live_handles`, `:memory_binary`, `:memory_total`,
  `:memory_rss` (absent when unknown), `:dirty_cpu` and `:dirty_io` (absent when
  `utilization_window_ms: 0`), the board's `:nsp_temp_c`, `:cpu_temp_c`, `:npu_busy` (the
  share of the tick this process spent in graphExecute), `:executes_per_s` and `:cpu_mhz_min`
  (the slowest cpufreq policy's clock; each absent when unknown, all with `board: false`) and
  `:cost_us`. Metadata: `%{monitor: name or pid, warnings: [warning], board: reading | nil,
  board_error: message | nil}` (`board_error`: why the board could not be read this tick).

  ## Cost

  A tick reads the counters (a NIF call on a normal scheduler), `/proc/self/statm` and
  `:erlang.memory/1`: around a hundred microseconds, and the board (a few hundred small sysfs
  files on a dirty IO scheduler: a few milliseconds on a board), reported as `:cost_us`. While
  a monitor with `board: true` runs, each successful execute adds its time to a per-model
  counter (one ETS update); without one it costs two atomic reads. Measuring
  utilization enables `scheduler_wall_time` for the window only (see
  `HexagonTpu.Stats.dirty_utilization/1`) and sleeps in the monitor process meanwhile; it
  uses no CPU, but `tick/2` and `last_report/2` wait for it.
  """

  use GenServer

  alias HexagonTpu.{Error, Options, Stats}

  @handle_metrics [:live_runtimes, :live_contexts, :live_graphs, :live_shared_buffers]
  @memory_metrics [:binary, :total, :rss]

  @typedoc "A current suspicion; see the module doc."
  @type warning ::
          %{
            kind: :leak,
            metric: atom(),
            from: non_neg_integer(),
            to: non_neg_integer(),
            intervals: pos_integer()
          }
          | %{
              kind: :saturation,
              scheduler: :dirty_cpu | :dirty_io,
              values: [float()],
              threshold: number()
            }
          | %{
              kind: :nsp_hot,
              zone: String.t(),
              temp_c: float(),
              hot_c: number(),
              clears_below_c: number(),
              npu_busy: float() | nil,
              executes_per_s: float() | nil
            }
          | %{
              kind: :throttling,
              graph: String.t(),
              execute_ms: float(),
              baseline_ms: float(),
              rise: float(),
              nsp_temp_c: float()
            }

  @typedoc "What one tick measured; see the module doc."
  @type report :: %{
          native: Stats.native(),
          live_handles: non_neg_integer(),
          memory: Stats.memory(),
          dirty_utilization: Stats.utilization() | nil,
          board: Stats.board() | nil,
          board_error: String.t() | nil,
          warnings: [warning()],
          tick: pos_integer(),
          at: DateTime.t(),
          cost_us: non_neg_integer()
        }

  @spec_opts %{
    name:
      {&__MODULE__.valid_name?/1, "an atom, {:global, term}, {:via, module, term} or nil",
       __MODULE__},
    interval_ms: {&__MODULE__.pos_integer?/1, "a positive integer (milliseconds)", 30_000},
    intervals: {&__MODULE__.pos_integer?/1, "a positive integer (ticks)", 5},
    min_handle_growth: {&__MODULE__.pos_integer?/1, "a positive integer (handles)", 1},
    min_memory_growth: {:non_neg_integer, "a non-negative integer (bytes)", 8 * 1024 * 1024},
    saturation_threshold: {&__MODULE__.fraction?/1, "a number greater than 0 and at most 1", 0.9},
    # nil: not given, so it adapts to the interval (validate/1)
    utilization_window_ms: {:non_neg_integer, "a non-negative integer (milliseconds)", nil},
    board: {:boolean, "a boolean", true},
    board_root: {:string_or_nil, "a directory (a string without NUL bytes) or nil", nil},
    hot_c: {&__MODULE__.number_or_nil?/1, "a number (degrees C) or nil", nil},
    hot_hysteresis_c: {&__MODULE__.non_neg_number?/1, "a non-negative number (degrees C)", 3.0},
    slowdown: {&__MODULE__.pos_number?/1, "a positive number (0.15: 15 % slower)", 0.15}
  }

  @default_window_ms 1_000

  @doc """
  Starts the monitor. Returns `{:error, %HexagonTpu.Error{reason: :invalid_option}}` for bad
  options (with a message naming the option and what was expected).

  ## Options

    * `:interval_ms` - time between ticks (default `30_000`)
    * `:intervals` - how many consecutive ticks a growth or saturation must last before it is
      reported (default `5`)
    * `:min_handle_growth` - least total growth of a live handle count over those ticks
      (default `1`: growing at every tick is enough)
    * `:min_memory_growth` - least total growth, in bytes, of a memory figure over those ticks
      (default 8 MiB; small ups and downs of memory are normal)
    * `:saturation_threshold` - busy share (0 < t <= 1) at or above which the dirty
      schedulers of a type count as saturated (default `0.9`)
    * `:utilization_window_ms` - how long each tick measures dirty scheduler utilization,
      at most `:interval_ms` (default `1_000`, or `:interval_ms` when that is shorter); `0`
      turns the measurement and the saturation warning off
    * `:board` - read the board at every tick and warn about throttling (default `true`)
    * `:board_root` - a directory standing in for `/` for the board's files (a copy of a
      board's tree, a test's fake one); default: the application environment's
      `:board_root`, else `/`. With `board: true`, one that is not a directory (or does not
      exist) is refused here, like any bad option
    * `:hot_c` - the NSP temperature (°C) from which it counts as hot; default `nil`: the NSP
      zones' own hot trip point (90 °C on QCS6490)
    * `:hot_hysteresis_c` - once hot, the NSP counts as hot until it falls more than this many
      degrees below the hot threshold (default `3.0`: a 90 °C trip clears below 87 °C), so a
      zone hovering at its trip point is one hot spell, warned once
    * `:slowdown` - how much slower than its cool baseline a model's mean execute time must be,
      with the NSP hot, to count as throttling (default `0.15`: 15 %)
    * `:name` - registered name (default `HexagonTpu.Monitor`); `nil` for none

  ## Examples

      iex> {:ok, pid} = HexagonTpu.Monitor.start_link(name: nil, utilization_window_ms: 0)
      iex> HexagonTpu.Monitor.tick(pid).warnings
      []
      iex> GenServer.stop(pid)
      :ok
      iex> {:error, error} = HexagonTpu.Monitor.start_link(interval_ms: 0)
      iex> error.message
      "HexagonTpu.Monitor: expected :interval_ms to be a positive integer (milliseconds), got 0"
  """
  @spec start_link(keyword()) :: GenServer.on_start() | {:error, Error.t()}
  def start_link(opts \\ []) do
    with {:ok, config} <- validate(opts) do
      gen_opts = if config.name, do: [name: config.name], else: []
      GenServer.start_link(__MODULE__, config, gen_opts)
    end
  end

  @doc """
  The child specification for a supervisor (`{HexagonTpu.Monitor, opts}` in a list of
  children): `start_link/1` with `opts`, under the id `HexagonTpu.Monitor`.

  ## Examples

      iex> HexagonTpu.Monitor.child_spec(interval_ms: 30_000)
      %{id: HexagonTpu.Monitor, start: {HexagonTpu.Monitor, :start_link, [[interval_ms: 30_000]]}}
      iex> children = [{HexagonTpu.Monitor, name: nil, utilization_window_ms: 0}]
      iex> {:ok, sup} = Supervisor.start_link(children, strategy: :one_for_one)
      iex> [{HexagonTpu.Monitor, pid, :worker, _}] = Supervisor.which_children(sup)
      iex> HexagonTpu.Monitor.tick(pid).tick
      1
      iex> Supervisor.stop(sup)
      :ok
  """
  @spec child_spec(keyword()) :: Supervisor.child_spec()
  def child_spec(opts), do: super(opts)

  @doc """
  Validates monitor options; returns the full configuration (defaults filled in).

  ## Options

  See `start_link/1`.

  ## Examples

  The utilization window follows a short interval:

      iex> {:ok, config} = HexagonTpu.Monitor.validate(interval_ms: 500)
      iex> {config.intervals, config.utilization_window_ms}
      {5, 500}
      iex> {:error, error} = HexagonTpu.Monitor.validate(interval_ms: 500, utilization_window_ms: 600)
      iex> error.message
      "HexagonTpu.Monitor: expected :utilization_window_ms to be at most :interval_ms (500), got 600"
  """
  @spec validate(keyword()) :: {:ok, map()} | {:error, Error.t()}
  def validate(opts) do
    with {:ok, config} <- Options.validate(opts, @spec_opts, "HexagonTpu.Monitor"),
         :ok <- HexagonTpu.Monitor.Board.check_root(config) do
      case config.utilization_window_ms do
        # The default must fit any valid interval: a short one is not a configuration error.
        nil ->
          {:ok, %{config | utilization_window_ms: min(@default_window_ms, config.interval_ms)}}

        window when window > config.interval_ms ->
          {:error,
           Error.new(
             :invalid_option,
             "HexagonTpu.Monitor: expected :utilization_window_ms to be at most :interval_ms " <>
               "(#{config.interval_ms}), got #{window}"
           )}

        _ ->
          {:ok, config}
      end
    end
  end

  @doc """
  Runs a tick now (besides the periodic ones) and returns its report. Waits for the
  utilization window.

  ## Options

  None; `timeout` is the `GenServer.call/3` timeout (default `:infinity`).

  ## Examples

      iex> {:ok, pid} = HexagonTpu.Monitor.start_link(name: nil, utilization_window_ms: 10)
      iex> report = HexagonTpu.Monitor.tick(pid)
      iex> {report.tick, report.dirty_utilization.window_ms, is_integer(report.native.executes)}
      {1, 10, true}
      iex> HexagonTpu.Monitor.tick(pid).tick
      2
      iex> GenServer.stop(pid)
      :ok
  """
  @spec tick(GenServer.server(), timeout()) :: report()
  def tick(server \\ __MODULE__, timeout \\ :infinity), do: GenServer.call(server, :tick, timeout)

  @doc """
  The report of the last tick, or `nil` before the first one.

  ## Options

  None; `timeout` is the `GenServer.call/3` timeout (default `60_000`: a tick in progress
  is waited for).

  ## Examples

      iex> {:ok, pid} = HexagonTpu.Monitor.start_link(name: nil, utilization_window_ms: 0)
      iex> HexagonTpu.Monitor.last_report(pid)
      nil
      iex> report = HexagonTpu.Monitor.tick(pid)
      iex> HexagonTpu.Monitor.last_report(pid) == report
      true
      iex> GenServer.stop(pid)
      :ok
  """
  @spec last_report(GenServer.server(), timeout()) :: report() | nil
  def last_report(server \\ __MODULE__, timeout \\ 60_000),
    do: GenServer.call(server, :last_report, timeout)

  # ---- option checks (public for HexagonTpu.Options captures) --------------------------------

  @doc false
  @spec pos_integer?(term()) :: boolean()
  def pos_integer?(v), do: is_integer(v) and v > 0
  @doc false
  @spec fraction?(term()) :: boolean()
  def fraction?(v), do: is_number(v) and v > 0 and v <= 1
  @doc false
  @spec pos_number?(term()) :: boolean()
  def pos_number?(v), do: is_number(v) and v > 0
  @doc false
  @spec non_neg_number?(term()) :: boolean()
  def non_neg_number?(v), do: is_number(v) and v >= 0
  @doc false
  @spec number_or_nil?(term()) :: boolean()
  def number_or_nil?(v), do: is_nil(v) or is_number(v)
  @doc false
  @spec valid_name?(term()) :: boolean()
  def valid_name?(nil), do: true
  def valid_name?(name) when is_atom(name), do: true
  def valid_name?({:global, _}), do: true
  def valid_name?({:via, mod, _}) when is_atom(mod), do: true
  def valid_name?(_), do: false

  # ---- server --------------------------------------------------------------------------------

  @impl GenServer
  def init(config) do
    # terminate/2 gives back the execute-time tracking of board: true, also at a shutdown
    Process.flag(:trap_exit, true)
    if config.board, do: HexagonTpu.Ledger.track(1)
    schedule(config)

    {:ok,
     %{
       config: config,
       id: config.name || self(),
       history: [],
       utilization: [],
       active: MapSet.new(),
       ticks: 0,
       last: nil,
       board: HexagonTpu.Monitor.Board.new()
     }}
  end

  @impl GenServer
  def terminate(_reason, %{config: config}) do
    if config.board, do: HexagonTpu.Ledger.track(-1)
  end

  @impl GenServer
  def handle_call(:tick, _from, state) do
    state = run_tick(state)
    {:reply, state.last, state}
  end

  def handle_call(:last_report, _from, state), do: {:reply, state.last, state}

  @impl GenServer
  def handle_info(:tick, state) do
    state = run_tick(state)
    schedule(state.config)
    {:noreply, state}
  end

  # trap_exit: a linked process's exit other than the parent's (which stops the server)
  def handle_info(_other, state), do: {:noreply, state}

  defp schedule(config), do: Process.send_after(self(), :tick, config.interval_ms)

  defp run_tick(%{config: config} = state) do
    t0 = System.monotonic_time()
    native = Stats.native()
    memory = Stats.memory()
    t1 = System.monotonic_time()

    util =
      if config.utilization_window_ms > 0,
        do: Stats.dirty_utilization(config.utilization_window_ms)

    t2 = System.monotonic_time()

    {board, board_warnings, board_state} =
      if config.board,
        do: HexagonTpu.Monitor.Board.tick(state.board, config),
        else: {nil, [], state.board}

    board_error = if config.board, do: board_state.error
    # once per spell of failed readings: every tick of it carries board: nil and the reason
    if board_error && !state.board.error, do: log(%{kind: :board_unreadable, error: board_error})

    n = config.intervals
    sample = sample(native, memory)
    history = Enum.take([sample | state.history], n + 1)
    utilization = if util, do: Enum.take([util | state.utilization], n), else: []

    warnings = leaks(history, config) ++ saturation(utilization, config) ++ board_warnings
    keys = MapSet.new(warnings, &warning_key/1)

    for w <- warnings, not MapSet.member?(state.active, warning_key(w)) do
      log(w)
      if w.kind in [:nsp_hot, :throttling], do: HexagonTpu.Monitor.Board.event(w, board, state.id)
    end

    # The tick's own cost: the readings and the analysis, not the utilization window (a sleep)
    # and not the user's telemetry handlers.
    t3 = System.monotonic_time()
    cost = System.convert_time_unit(t1 - t0 + (t3 - t2), :native, :microsecond)

    report = %{
      native: native,
      live_handles: Stats.live_handles(native),
      memory: memory,
      dirty_utilization: util,
      board: board,
      board_error: board_error,
      warnings: warnings,
      tick: state.ticks + 1,
      at: DateTime.utc_now(),
      cost_us: cost
    }

    HexagonTpu.Telemetry.stats(measurements(report), %{
      monitor: state.id,
      warnings: warnings,
      board: board,
      board_error: board_error
    })

    %{
      state
      | board: board_state,
        history: history,
        utilization: utilization,
        active: keys,
        ticks: state.ticks + 1,
        last: report
    }
  end

  defp sample(native, memory) do
    handles = Map.take(native, @handle_metrics)
    mem = for {k, v} <- Map.take(memory, @memory_metrics), is_integer(v), into: %{}, do: {k, v}
    Map.merge(handles, mem)
  end

  # history is newest first, at most intervals + 1 samples: a metric leaks when it grew at each
  # of the last `intervals` steps and by at least the minimum growth over them.
  defp leaks(history, %{intervals: n} = config) when length(history) == n + 1 do
    [newest | _] = history
    oldest = List.last(history)

    for metric <- @handle_metrics ++ @memory_metrics,
        values = history |> Enum.map(&Map.get(&1, metric)) |> Enum.reverse(),
        Enum.all?(values, &is_integer/1),
        strictly_increasing?(values),
        newest[metric] - oldest[metric] >= min_growth(metric, config) do
      %{kind: :leak, metric: metric, from: oldest[metric], to: newest[metric], intervals: n}
    end
  end

  defp leaks(_history, _config), do: []

  defp min_growth(metric, config) when metric in @handle_metrics, do: config.min_handle_growth
  defp min_growth(_metric, config), do: config.min_memory_growth

  defp strictly_increasing?(values),
    do: values |> Enum.chunk_every(2, 1, :discard) |> Enum.all?(fn [a, b] -> b > a end)

  defp saturation(utilization, %{intervals: n, saturation_threshold: t})
       when length(utilization) == n do
    for scheduler <- [:dirty_cpu, :dirty_io],
        values = utilization |> Enum.map(& &1[scheduler]) |> Enum.reverse(),
        Enum.all?(values, &(&1 >= t)) do
      %{kind: :saturation, scheduler: scheduler, values: values, threshold: t}
    end
  end

  defp saturation(_utilization, _config), do: []

  defp warning_key(%{kind: :leak, metric: m}), do: {:leak, m}
  defp warning_key(%{kind: :saturation, scheduler: s}), do: {:saturation, s}
  defp warning_key(%{kind: :nsp_hot}), do: :nsp_hot
  defp warning_key(%{kind: :throttling, graph: g}), do: {:throttling, g}

  defp log(%{kind: :leak, metric: metric, from: from, to: to, intervals: n})
       when metric in @handle_metrics do
    warn(
      "HexagonTpu.Monitor: #{metric} grew at each of the last #{n} intervals " <>
        "(#{from} -> #{to}): models or handles are being kept alive (a leak?); handles " <>
        "dropped without close/1 are freed after garbage collection"
    )
  end

  defp log(%{kind: :leak, metric: metric, from: from, to: to, intervals: n}) do
    warn(
      "HexagonTpu.Monitor: #{memory_name(metric)} grew at each of the last #{n} intervals " <>
        "(#{from} -> #{to} bytes, +#{to - from}): possible memory leak"
    )
  end

  defp log(%{kind: :saturation, scheduler: scheduler, values: values, threshold: t}) do
    shown = Enum.map_join(values, ", ", &:erlang.float_to_binary(&1 * 1.0, decimals: 2))

    warn(
      "HexagonTpu.Monitor: #{scheduler} schedulers busy at or above #{t} for the last " <>
        "#{length(values)} intervals (#{shown}): inference calls are queueing for dirty " <>
        "schedulers"
    )
  end

  defp log(%{kind: kind} = w) when kind in [:nsp_hot, :throttling],
    do: warn(HexagonTpu.Monitor.Board.message(w))

  defp log(%{kind: :board_unreadable, error: error}) do
    warn(
      "HexagonTpu.Monitor: cannot read the board, so no temperatures, clocks or throttling " <>
        "warnings until it can: #{error} (the :board_root option, else the application's " <>
        ":board_root; each tick's report carries board: nil and this as board_error)"
    )
  end

  # Erlang's :logger (kernel), which Elixir's Logger is built on: Logger itself would need
  # :logger in the application's extra_applications.
  defp warn(message), do: :logger.warning(message, %{mfa: {__MODULE__, :log, 1}})

  defp memory_name(:binary), do: "BEAM binary memory"
  defp memory_name(:total), do: "BEAM total memory"
  defp memory_name(:rss), do: "OS resident memory (RSS)"

  defp measurements(report) do
    mem =
      for {k, name} <- [binary: :memory_binary, total: :memory_total, rss: :memory_rss],
          is_integer(report.memory[k]),
          into: %{},
          do: {name, report.memory[k]}

    util =
      case report.dirty_utilization do
        nil -> %{}
        u -> Map.take(u, [:dirty_cpu, :dirty_io])
      end

    report.native
    |> Map.merge(mem)
    |> Map.merge(util)
    |> Map.merge(HexagonTpu.Monitor.Board.measurements(report.board))
    |> Map.merge(%{live_handles: report.live_handles, cost_us: report.cost_us})
  end
end
