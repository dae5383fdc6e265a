defmodule HexagonTpu.MonitorBoardTest do
  # HexagonTpu.Monitor's board readings and throttling warning against fake board trees: the
  # NSP's temperature raised in the tree, the reference backend's executes slowed (a stall of
  # every graphExecute), ticks run by hand. Not async: the stall is process-wide.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import HexagonTpu.BoardTree
  import HexagonTpu.TestModels
  alias HexagonTpu.Monitor

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
    run(model, 5)
    cool = Monitor.tick(mon)
    assert board_warnings(cool) == []

    temp!(root, 12, 95_200)
    stall(@stall_us)

    log =
      capture_log(fn ->
        run(model, 3)
        report = Monitor.tick(mon)
        assert [nsp, slow] = board_warnings(report)
        assert %{kind: :nsp_hot, zone: "nspss0-thermal", temp_c: 95.2, hot_c: 90.0} = nsp
        assert %{kind: :throttling, graph: ^graph, cool_baseline: true, nsp_temp_c: 95.2} = slow
        assert slow.execute_ms >= @stall_us / 1000 and slow.execute_ms > slow.baseline_ms
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
    run(model, 5)
    log = capture_log(fn -> assert [%{kind: :nsp_hot}] = board_warnings(Monitor.tick(mon)) end)
    assert log =~ "the NSP (nspss0-thermal) is at 96.0 °C"
    stall(@stall_us)
    run(model, 3)

    log =
      capture_log(fn ->
        assert [%{kind: :nsp_hot}, %{kind: :throttling, graph: ^graph, cool_baseline: false}] =
                 board_warnings(Monitor.tick(mon))
      end)

    assert log =~ "its first measured interval"
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
    report = Monitor.tick(mon)
    assert report.board == nil
    assert {:error, error} = Monitor.validate(slowdown: 0)
    assert error.message =~ "expected :slowdown to be a positive number"
    assert {:error, _} = Monitor.validate(hot_c: "90")
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

    for _ <- 1..5, do: {:ok, _} = add(model)
    Monitor.tick(mon)
    assert_receive {:event, [:hexagon_tpu, :stats], m, %{monitor: ^mon, board: board}}
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
