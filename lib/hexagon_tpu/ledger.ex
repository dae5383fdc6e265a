defmodule HexagonTpu.Ledger do
  @moduledoc false
  # What hexagon_tpu remembers for its figures since the application started: when it started,
  # each model's load time and first answer (HexagonTpu.Stats.boot/0), each graph's execute
  # count and time while a monitor wants them (HexagonTpu.Monitor's throttling warning), and
  # the last board reading's counters (HexagonTpu.Stats.board/1's busy share).
  #
  # The server only owns the lifetime of a public ETS table and of an :atomics array of two
  # flags, found through :persistent_term (put once per server: an :atomics reference is
  # cheap to read there and never replaced in normal running). Callers write the table
  # themselves. The flags keep the execute path to two atomic reads: `awaiting` is 1 while a
  # loaded model has not answered yet, `tracking` counts the monitors that want execute times;
  # with both 0 an execute records nothing. Without the application (code merely on the path)
  # there is no table and nothing is recorded.
  #
  # `awaiting` stays right without a lock: a load inserts its row, then sets the flag; a first
  # answer takes its row (atomically, so one caller wins) and rechecks: flag to 0, then back to
  # 1 if any row is left. A row inserted after a recheck looked is followed by its own "set".

  use GenServer

  @table __MODULE__
  @flags {__MODULE__, :flags}
  @awaiting 1
  @tracking 2

  @spec start_link(integer()) :: GenServer.on_start()
  def start_link(started_native),
    do: GenServer.start_link(__MODULE__, started_native, name: __MODULE__)

  @impl GenServer
  def init(started_native) do
    # so terminate/2 runs at the application's stop and takes the flags away with the table
    Process.flag(:trap_exit, true)

    :ets.new(@table, [
      :set,
      :public,
      :named_table,
      read_concurrency: true,
      write_concurrency: true
    ])

    {vm_ms, _} = :erlang.statistics(:wall_clock)
    :ets.insert(@table, {:started, started_native, DateTime.utc_now(), vm_ms})
    :persistent_term.put(@flags, :atomics.new(2, signed: true))
    {:ok, nil}
  end

  @impl GenServer
  def terminate(_reason, _state), do: :persistent_term.erase(@flags)

  defp flags, do: :persistent_term.get(@flags, nil)

  @doc "{started_native, started_at DateTime, VM uptime in ms at that moment}, or nil."
  def started do
    case lookup(:started) do
      [{:started, native, at, vm_ms}] -> {native, at, vm_ms}
      _ -> nil
    end
  end

  # ---- loads and first answers ----------------------------------------------------------------

  @doc "A model was loaded (its graph `name`) in `duration` native units."
  def loaded(name, duration) when is_binary(name) do
    with ref when ref != nil <- flags() do
      now = System.monotonic_time()
      key = {:model, name}
      # {key, loads, last load duration, end of the first load}
      if not :ets.insert_new(@table, {key, 1, duration, now}) do
        :ets.update_counter(@table, key, [{2, 1}])
        :ets.update_element(@table, key, {3, duration})
      end

      if :ets.lookup(@table, {:answer, name}) == [] and
           :ets.insert_new(@table, {{:awaiting, name}, now}),
         do: :atomics.put(ref, @awaiting, 1)
    end

    :ok
  rescue
    ArgumentError -> :ok
  end

  def loaded(_name, _duration), do: :ok

  @doc """
  `fun` (an execute span's function) as it is, or wrapped to record its answer when a model
  awaits its first one or a monitor tracks execute times. One :persistent_term read and two
  atomic reads per call otherwise.
  """
  def watch_execute(graph, fun) do
    ref = flags()

    if ref != nil and (:atomics.get(ref, @awaiting) != 0 or :atomics.get(ref, @tracking) > 0) do
      fn ->
        {result, stats} = answer = fun.()
        if ok?(result), do: answered(ref, graph, stats)
        answer
      end
    else
      fun
    end
  end

  defp ok?(result) when is_tuple(result) and tuple_size(result) > 0, do: elem(result, 0) == :ok
  defp ok?(_result), do: false

  defp answered(ref, graph, stats) do
    if :atomics.get(ref, @tracking) > 0 and is_map(stats) and is_integer(stats[:execute_ns]),
      do: record_execute(graph, stats.execute_ns)

    if :atomics.get(ref, @awaiting) != 0, do: first_answer(ref, graph)
  rescue
    ArgumentError -> :ok
  end

  @doc """
  Counts one execute of `graph` that took `execute_ns` into the monitors' totals (what a
  tracked execute's answer does; tests give the monitor exact figures this way).
  """
  def record_execute(graph, execute_ns) when is_integer(execute_ns) and execute_ns >= 0 do
    key = {:exec, graph}
    :ets.update_counter(@table, key, [{2, 1}, {3, execute_ns}], {key, 0, 0})
    :ok
  rescue
    ArgumentError -> :ok
  end

  defp first_answer(ref, graph) do
    case :ets.take(@table, {:awaiting, graph}) do
      [{_, loaded_native}] ->
        now = System.monotonic_time()
        :ets.insert(@table, {{:answer, graph}, now})
        recheck(ref)

        with {started, _at, _vm} <- started() do
          HexagonTpu.Telemetry.first_answer(
            %{since_start: now - started, since_load: now - loaded_native},
            %{graph: graph}
          )
        end

      [] ->
        :ok
    end
  end

  defp recheck(ref) do
    :atomics.put(ref, @awaiting, 0)
    left = :ets.select_count(@table, [{{{:awaiting, :_}, :_}, [], [true]}])
    if left > 0, do: :atomics.put(ref, @awaiting, 1)
  end

  @doc "%{name => %{loads:, load_native:, first_loaded_native:, answer_native: | nil}}."
  def models do
    answers = for {{:answer, name}, at} <- tab2list(), into: %{}, do: {name, at}

    for {{:model, name}, loads, duration, first} <- tab2list(), into: %{} do
      {name,
       %{
         loads: loads,
         load_native: duration,
         first_loaded_native: first,
         answer_native: answers[name]
       }}
    end
  end

  # ---- execute times, for monitors --------------------------------------------------------------

  @doc "A monitor starts (+1) or stops (-1) wanting per-graph execute times."
  def track(delta) do
    with ref when ref != nil <- flags(), do: :atomics.add(ref, @tracking, delta)
    :ok
  end

  @doc "%{graph name => {executes, execute_ns}} since tracking began."
  def execute_totals do
    for {{:exec, name}, n, ns} <- tab2list(), into: %{}, do: {name, {n, ns}}
  end

  # ---- the last board reading ---------------------------------------------------------------------

  def put_last_board(counters) do
    :ets.insert(@table, {:last_board, counters})
    :ok
  rescue
    ArgumentError -> :ok
  end

  def last_board do
    case lookup(:last_board) do
      [{:last_board, counters}] -> counters
      _ -> nil
    end
  end

  defp lookup(key) do
    :ets.lookup(@table, key)
  rescue
    ArgumentError -> []
  end

  defp tab2list do
    :ets.tab2list(@table)
  rescue
    ArgumentError -> []
  end
end
