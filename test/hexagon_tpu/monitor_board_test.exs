defmodule HexagonTpu.MonitorBoardTest do
  # HexagonTpu.Monitor's board readings and throttling warning against fake board trees: the
  # NSP's temperature raised in the tree, the reference backend's executes slowed (a stall of
  # every graphExecute), ticks run by hand. Not async: the stall is process-wide.
  #
  # Nothing here depends on how fast this machine is: a model's baseline is given to the
  # monitor exactly (Ledger.record_execute, what a tracked execute's answer records), and the
  # slowed executes are at least the stall long (a sleep's floor), so "slower than its
  # baseline" holds on a loaded machine, under sanitizers or an emulator alike.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import HexagonTpu.BoardTree
  import HexagonTpu.TestModels
  alias HexagonTpu.{Ledger, Monitor}

  # graphExecute sleeps this long while stalled: far beyond any unstalled execute of add_f32
  @stall_us 40_000

  setup_all do
    {:ok, _} = Application.ensure_all_started(:logger)
    :ok
  end

  setup do
    on_exit(&reset_ref_controls/0)
    name = "mb_#{System.unique_integer([:positive])}"
    text = String.replace(add_f32(), "graph add_f32", "graph #{name}")
    model = HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)
    on_exit(fn -> HexagonTpu.close(model) end)
    %{model: model, graph: name}
  end

  def start!(opts) do
    opts = Keyword.merge([name: nil, interval_ms: 3_600_000, utilization_window_ms: 0], opts)
    start_supervised!(Supervisor.child_spec({Monitor, opts}, id: make_ref()))
  end

  defp run(model, n), do: for(_ <- 1..n, do: {:ok, _} = add(model))

  defp board_warnings(report),
    do: Enum.filter(report.warnings, &(&1.kind in [:nsp_hot, :throttling]))

  # `n` executes of `graph` taking `ms` each, as the monitor's figures
  defp record(graph, n, ms),
    do: for(_ <- 1..n, do: Ledger.record_execute(graph, round(ms * 1.0e6)))

  defp count(text, part), do: length(String.split(text, part)) - 1

  test "a tick carries the board's figures", %{model: model} do
    root = dragon!("figures")
    mon = start!(board_root: root)
    Monitor.tick(mon)
    run(model, 5)
    report = Monitor.tick(mon)
    assert report.board.nsp.temp_c == 61.0
    assert report.board.npu_busy > 0 and report.board.executes_per_s > 0
    assert Enum.map(report.board.cpufreq, & &1.governor) == ["performance", "performance"]
    assert board_warnings(report) == []
    # board: false reads nothing of the board
    assert Monitor.tick(start!(board: false)).board == nil
  end

  test "nothing fires on a cool board, even with slow executes", %{model: model} do
    root = dragon!("cool", 70_000)
    mon = start!(board_root: root)
    run(model, 3)
    Monitor.tick(mon)
    stall(@stall_us)

    log =
      capture_log(fn ->
        run(model, 3)
        report = Monitor.tick(mon)
        assert board_warnings(report) == []
      end)

    refute log =~ "NSP"
    refute log =~ "throttling"
  end

  test "a hot NSP and a model slower than on a cool board: warned once, with the figures",
       %{model: model, graph: graph} do
    root = dragon!("hot")
    mon = start!(board_root: root)
    # its cool baseline: 1 ms an execute
    record(graph, 5, 1.0)
    cool = Monitor.tick(mon)
    assert board_warnings(cool) == []

    temp!(root, 12, 95_200)
    stall(@stall_us)

    log =
      capture_log(fn ->
        # the reference backend's own executes, each at least the stall long
        run(model, 3)
        report = Monitor.tick(mon)
        assert [nsp, slow] = board_warnings(report)

        assert %{kind: :nsp_hot, zone: "nspss0-thermal", temp_c: 95.2, hot_c: 90.0} = nsp
        assert nsp.clears_below_c == 87.0
        assert %{kind: :throttling, graph: ^graph, cool_baseline: true, nsp_temp_c: 95.2} = slow
        assert slow.baseline_ms == 1.0 and slow.execute_ms >= @stall_us / 1000
        assert_in_delta slow.rise, slow.execute_ms / slow.baseline_ms - 1, 1.0e-9
      end)

    assert log =~ "the NSP (nspss0-thermal) is at 95.2 °C, at or above its hot trip point 90.0 °C"
    assert log =~ "graph '#{graph}' executes in"
    assert log =~ "its mean on a cool board"

    # still hot and slow: in the report, not logged again
    log =
      capture_log(fn ->
        run(model, 2) && assert(length(board_warnings(Monitor.tick(mon))) == 2)
      end)

    refute log =~ "HexagonTpu.Monitor"

    # cooled down: gone
    temp!(root, 12, 60_000)
    reset_ref_controls()
    run(model, 2)
    assert board_warnings(Monitor.tick(mon)) == []
  end

  test "a board hot from the start: the model's first interval is its baseline",
       %{model: model, graph: graph} do
    root = dragon!("hot_start", 96_000)
    mon = start!(board_root: root, slowdown: 0.5)
    record(graph, 5, 2.0)
    log = capture_log(fn -> assert [%{kind: :nsp_hot}] = board_warnings(Monitor.tick(mon)) end)
    assert log =~ "the NSP (nspss0-thermal) is at 96.0 °C"
    stall(@stall_us)
    run(model, 3)

    log =
      capture_log(fn ->
        assert [%{kind: :nsp_hot}, %{kind: :throttling, graph: ^graph, cool_baseline: false} = w] =
                 board_warnings(Monitor.tick(mon))

        assert w.baseline_ms == 2.0
      end)

    assert log =~ "its first measured interval"
  end

  test "slower by the :slowdown or more counts, less does not: exact figures", %{graph: graph} do
    root = dragon!("exact")
    mon = start!(board_root: root)
    record(graph, 4, 1.0)
    assert board_warnings(Monitor.tick(mon)) == []
    temp!(root, 12, 93_000)
    # 10 % slower: under the 15 % of :slowdown
    record(graph, 3, 1.1)
    capture_log(fn -> assert [%{kind: :nsp_hot}] = board_warnings(Monitor.tick(mon)) end)
    # twice as slow: throttling, the figures exact
    record(graph, 2, 2.0)

    log =
      capture_log(fn ->
        assert [%{kind: :nsp_hot}, slow] = board_warnings(Monitor.tick(mon))

        assert %{kind: :throttling, execute_ms: 2.0, baseline_ms: 1.0, rise: 1.0} = slow
        assert slow.cool_baseline == true
      end)

    assert log =~
             "graph '#{graph}' executes in 2.00 ms, 100% above its mean on a cool board (1.00 ms)"

    refute log =~ "the NSP (nspss0-thermal) is at"
  end

  test "a zone hovering at its trip point is one hot spell: warned once, cleared below it" do
    root = dragon!("hover", 90_100)
    # the other NSP zone well below: nspss0 alone makes the NSP's temperature
    temp!(root, 13, 60_000)
    mon = start!(board_root: root)

    hover =
      capture_log(fn ->
        assert [%{kind: :nsp_hot, temp_c: 90.1}] = board_warnings(Monitor.tick(mon))

        for temp <- [89_900, 90_100, 89_900, 87_000] do
          temp!(root, 12, temp)
          assert [%{kind: :nsp_hot, temp_c: t, hot_c: 90.0}] = board_warnings(Monitor.tick(mon))
          assert t == temp / 1000
        end
      end)

    assert count(hover, "HexagonTpu.Monitor: the NSP") == 1
    assert hover =~ "it counts as hot until it falls below 87.0 °C"
    # more than 3 degrees below the trip: the spell is over; the next one is warned again
    temp!(root, 12, 86_900)
    assert board_warnings(Monitor.tick(mon)) == []
    temp!(root, 12, 90_000)
    again = capture_log(fn -> assert [_] = board_warnings(Monitor.tick(mon)) end)
    assert count(again, "HexagonTpu.Monitor: the NSP (nspss0-thermal) is at 90.0 °C") == 1

    # hot_hysteresis_c: 0 clears at the trip point itself
    flap_root = dragon!("flap", 90_100)
    temp!(flap_root, 13, 60_000)
    flap = start!(board_root: flap_root, hot_hysteresis_c: 0)

    flapping =
      capture_log(fn ->
        for temp <- [90_100, 89_900, 90_100] do
          temp!(flap_root, 12, temp)
          assert length(board_warnings(Monitor.tick(flap))) == if(temp > 90_000, do: 1, else: 0)
        end
      end)

    assert count(flapping, "HexagonTpu.Monitor: the NSP") == 2
    assert {:error, e} = Monitor.validate(hot_hysteresis_c: -1)
    assert e.message =~ "expected :hot_hysteresis_c to be a non-negative number (degrees C)"
  end

  test ":hot_c overrides the NSP's trip point; a root that went away is said" do
    root = dragon!("threshold", 85_000)

    log =
      capture_log(fn ->
        assert [%{kind: :nsp_hot, hot_c: 80}] =
                 board_warnings(Monitor.tick(start!(board_root: root, hot_c: 80)))
      end)

    assert log =~ "at or above its hot trip point 80.0 °C"

    assert board_warnings(Monitor.tick(start!(board_root: root))) == []

    mon = start!(board_root: root)
    File.rm_rf!(root)

    log =
      capture_log(fn ->
        report = Monitor.tick(mon)
        assert report.board == nil
        assert report.board_error =~ "root '#{root}': No such file or directory"
      end)

    assert log =~ "HexagonTpu.Monitor: cannot read the board"
    assert {:error, error} = Monitor.validate(slowdown: 0)
    assert error.message =~ "expected :slowdown to be a positive number"
    assert {:error, _} = Monitor.validate(hot_c: "90")
  end
end

defmodule HexagonTpu.MonitorBoardErrorTest do
  # A monitor whose board cannot be read says so: a root that is not a directory is refused at
  # the start; one that goes away later is said once in the log per spell of failed readings,
  # and in every tick's report.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  alias HexagonTpu.Monitor

  setup_all do
    {:ok, _} = Application.ensure_all_started(:logger)
    :ok
  end

  defp missing, do: Path.join(HexagonTpu.BoardTree.root!("gone"), "nonexistent")

  test "a board root that does not exist or is a file is refused at the start, naming it" do
    root = missing()

    assert {:error, %HexagonTpu.Error{reason: :invalid_option, message: message}} =
             Monitor.start_link(name: nil, board_root: root)

    assert message ==
             "HexagonTpu.Monitor: expected :board_root to be a directory (the board's files " <>
               "are read under it), got #{inspect(root)}, which does not exist"

    file = Path.join(HexagonTpu.BoardTree.root!("file"), "not_a_dir")
    File.write!(file, "")
    assert {:error, e} = Monitor.validate(board_root: file)
    assert e.message =~ "got #{inspect(file)}, which is a regular file"

    # the application's :board_root when the option is not given
    previous = Application.get_env(:hexagon_tpu, :board_root)

    try do
      Application.put_env(:hexagon_tpu, :board_root, root)
      assert {:error, e} = Monitor.validate([])
      assert e.message =~ "expected the application's :board_root to be a directory"
      assert e.message =~ "which does not exist"
      # board: false reads nothing, so the root does not matter
      assert {:ok, %{board: false}} = Monitor.validate(board: false)
      assert {:ok, _} = Monitor.validate(board: false, board_root: file)
    after
      Application.put_env(:hexagon_tpu, :board_root, previous)
    end
  end

  test "a board root that went away: warned once, the reason in every report" do
    root = HexagonTpu.BoardTree.dragon!("went_away")

    mon =
      start_supervised!(
        {Monitor, name: nil, interval_ms: 3_600_000, utilization_window_ms: 0, board_root: root}
      )

    assert %{board: %{}, board_error: nil} = Monitor.tick(mon)
    File.rm_rf!(root)

    log =
      capture_log(fn ->
        for _ <- 1..3 do
          report = Monitor.tick(mon)
          assert report.board == nil
          assert report.board_error =~ "root '#{root}': No such file or directory"
        end
      end)

    assert length(String.split(log, "HexagonTpu.Monitor: cannot read the board")) == 2
    assert log =~ "root '#{root}': No such file or directory"

    # readable again: nothing to say; unreadable again: said again, once
    File.mkdir_p!(root)
    quiet = capture_log(fn -> assert %{board: %{}, board_error: nil} = Monitor.tick(mon) end)
    refute quiet =~ "cannot read the board"
    File.rm_rf!(root)
    again = capture_log(fn -> Monitor.tick(mon) && Monitor.tick(mon) end)
    assert length(String.split(again, "HexagonTpu.Monitor: cannot read the board")) == 2
  end
end

defmodule HexagonTpu.MonitorBoardTelemetryTest do
  # The same warnings as [:hexagon_tpu, :board, :throttling] events, and the board's figures
  # in [:hexagon_tpu, :stats]: only with :telemetry.
  use ExUnit.Case, async: false

  @moduletag :telemetry
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:telemetry)
  @compile {:no_warn_undefined, [:telemetry]}

  import ExUnit.CaptureLog
  import HexagonTpu.BoardTree
  import HexagonTpu.TestModels
  alias HexagonTpu.Monitor

  setup do
    {:ok, _} = Application.ensure_all_started(:logger)
    on_exit(&reset_ref_controls/0)
    test = self()
    id = "board-#{System.unique_integer()}"

    events = [
      [:hexagon_tpu, :board, :throttling],
      [:hexagon_tpu, :stats],
      [:hexagon_tpu, :model, :first_answer]
    ]

    :ok = :telemetry.attach_many(id, events, &__MODULE__.forward/4, test)
    on_exit(fn -> :telemetry.detach(id) end)
    name = "mbt_#{System.unique_integer([:positive])}"
    text = String.replace(add_f32(), "graph add_f32", "graph #{name}")
    model = HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)
    on_exit(fn -> HexagonTpu.close(model) end)
    %{model: model, graph: name}
  end

  # the monitors' events (this module is not async: only its own monitor runs), and first
  # answers given in the test process
  def forward(name, measurements, meta, test) do
    if is_pid(meta[:monitor]) or self() == test,
      do: send(test, {:event, name, measurements, meta})
  end

  test "the throttling event fires with the figures when the NSP is hot; not when cool",
       %{model: model, graph: graph} do
    root = dragon!("events")

    mon =
      start_supervised!(
        {Monitor, name: nil, interval_ms: 3_600_000, utilization_window_ms: 0, board_root: root}
      )

    # the model's cool baseline, exactly: 1 µs an execute
    for _ <- 1..5, do: HexagonTpu.Ledger.record_execute(graph, 1_000)
    Monitor.tick(mon)

    assert_receive {:event, [:hexagon_tpu, :stats], m,
                    %{monitor: ^mon, board: board, board_error: nil}}

    assert m.nsp_temp_c == 61.0 and m.cpu_temp_c == 55.5 and m.cpu_mhz_min == 1804.8
    assert board.nsp.temp_c == 61.0
    refute_received {:event, [:hexagon_tpu, :board, :throttling], _, _}

    temp!(root, 13, 97_000)
    stall(40_000)
    for _ <- 1..3, do: {:ok, _} = add(model)
    capture_log(fn -> Monitor.tick(mon) end)

    assert_receive {:event, [:hexagon_tpu, :board, :throttling], nsp,
                    %{reason: :nsp_hot, zone: "nspss1-thermal", monitor: ^mon}}

    assert nsp.temp_c == 97.0 and nsp.hot_c == 90.0 and is_float(nsp.npu_busy)

    assert_receive {:event, [:hexagon_tpu, :board, :throttling], slow,
                    %{reason: :execute_slower, graph: ^graph, board: %{nsp: %{hot: true}}}}

    assert slow.execute_ms > slow.baseline_ms and slow.rise > 0.15 and slow.temp_c == 97.0
    assert slow.baseline_ms == 0.001 and slow.execute_ms >= 40.0
  end

  test "a zone hovering at its trip point fires one event; an unreadable board is in the metadata" do
    root = dragon!("hover_events", 90_100)
    temp!(root, 13, 60_000)

    mon =
      start_supervised!(
        {Monitor, name: nil, interval_ms: 3_600_000, utilization_window_ms: 0, board_root: root}
      )

    capture_log(fn ->
      for temp <- [90_100, 89_900, 90_100, 89_900, 90_050] do
        temp!(root, 12, temp)
        Monitor.tick(mon)
      end
    end)

    assert_received {:event, [:hexagon_tpu, :board, :throttling],
                     %{temp_c: 90.1, hot_c: 90.0, clears_below_c: 87.0},
                     %{reason: :nsp_hot, monitor: ^mon}}

    refute_received {:event, [:hexagon_tpu, :board, :throttling], _, %{monitor: ^mon}}

    File.rm_rf!(root)
    capture_log(fn -> Monitor.tick(mon) end)

    assert_received {:event, [:hexagon_tpu, :stats], m,
                     %{monitor: ^mon, board: nil, board_error: error}}

    assert error =~ "root '#{root}': No such file or directory"
    refute Map.has_key?(m, :nsp_temp_c)
  end

  test "a model's first answer since the start is an event, once", %{model: model, graph: graph} do
    {:ok, _} = add(model)
    assert_receive {:event, [:hexagon_tpu, :model, :first_answer], m, %{graph: ^graph}}
    assert m.since_start > 0 and m.since_load >= 0 and m.since_start > m.since_load
    boot = HexagonTpu.Stats.boot().models[graph]

    assert_in_delta boot.first_answer_ms,
                    System.convert_time_unit(m.since_start, :native, :microsecond) / 1000,
                    0.002

    {:ok, _} = add(model)
    refute_received {:event, [:hexagon_tpu, :model, :first_answer], _, %{graph: ^graph}}
  end
end
