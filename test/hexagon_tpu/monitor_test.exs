defmodule HexagonTpu.MonitorTest do
  # Not async: the Monitor reads process-wide counters and scheduler utilization.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Monitor, Runtime}

  setup_all do
    # capture_log/1 needs Elixir's Logger; this package does not start it (the Monitor logs
    # through Erlang's :logger, which Logger forwards), an application using it always has.
    {:ok, _} = Application.ensure_all_started(:logger)
    %{bin: build!(add_f32())}
  end

  setup do
    {:ok, _} = Runtime.shared(backend: :reference)
    settle()
    :ok
  end

  # Ticks only when told: the periodic timer is an hour away.
  defp start!(opts) do
    opts = Keyword.merge([name: nil, interval_ms: 3_600_000, utilization_window_ms: 0], opts)
    start_supervised!(Supervisor.child_spec({Monitor, opts}, id: make_ref()))
  end

  describe "options" do
    test "defaults" do
      assert {:ok, c} = Monitor.validate([])
      assert c.interval_ms == 30_000
      assert c.intervals == 5
      assert c.saturation_threshold == 0.9
      assert c.utilization_window_ms == 1_000
      assert c.min_handle_growth == 1
      assert c.min_memory_growth == 8 * 1024 * 1024
      assert c.name == Monitor
    end

    test "bad options are :invalid_option errors that say what was expected" do
      cases = [
        {[interval_ms: 0], ~r/expected :interval_ms to be a positive integer.*got 0/},
        {[interval_ms: "30s"], ~r/:interval_ms/},
        {[intervals: -1], ~r/expected :intervals to be a positive integer/},
        {[saturation_threshold: 1.5],
         ~r/expected :saturation_threshold to be a number greater than 0 and at most 1, got 1.5/},
        {[saturation_threshold: 0], ~r/:saturation_threshold/},
        {[min_memory_growth: -5], ~r/:min_memory_growth/},
        {[min_handle_growth: 0], ~r/:min_handle_growth/},
        {[utilization_window_ms: 2_000, interval_ms: 1_000],
         ~r/expected :utilization_window_ms to be at most :interval_ms \(1000\), got 2000/},
        {[utilization_window_ms: 1_000, interval_ms: 50],
         ~r/expected :utilization_window_ms to be at most :interval_ms \(50\), got 1000/},
        {[name: "monitor"], ~r/:name/},
        {[intervall_ms: 5], ~r/unknown option :intervall_ms/},
        {:not_a_list, ~r/keyword list/}
      ]

      for {opts, message} <- cases do
        assert {:error, %Error{reason: :invalid_option, message: m}} = Monitor.start_link(opts)
        assert m =~ message, "#{inspect(opts)}: #{m}"
        assert m =~ "HexagonTpu.Monitor"
      end
    end

    test "the default window adapts to a short interval; an explicit one is kept" do
      assert {:ok, %{utilization_window_ms: 50}} = Monitor.validate(interval_ms: 50)
      assert {:ok, %{utilization_window_ms: 1_000}} = Monitor.validate(interval_ms: 1_000)
      assert {:ok, %{utilization_window_ms: 1_000}} = Monitor.validate(interval_ms: 60_000)

      assert {:ok, %{utilization_window_ms: 0}} =
               Monitor.validate(interval_ms: 50, utilization_window_ms: 0)

      assert {:ok, %{utilization_window_ms: 20}} =
               Monitor.validate(interval_ms: 50, utilization_window_ms: 20)

      # what a newcomer wrote: starts, and measures within its interval
      pid = start_supervised!({Monitor, name: nil, interval_ms: 50})
      assert %{dirty_utilization: %{window_ms: 50}} = Monitor.tick(pid)
    end

    test "a supervisor reports the error" do
      assert {:error, {%Error{reason: :invalid_option}, _}} =
               start_supervised({Monitor, interval_ms: -1})
    end
  end

  describe "reports" do
    test "last_report/1 is nil before the first tick; tick/1 returns the report" do
      pid = start!([])
      assert Monitor.last_report(pid) == nil
      report = Monitor.tick(pid)
      assert Monitor.last_report(pid) == report

      assert %{
               native: %{live_graphs: _, executes: _},
               live_handles: handles,
               memory: %{binary: _, total: _, rss: _},
               dirty_utilization: nil,
               warnings: [],
               tick: 1,
               at: %DateTime{},
               cost_us: cost
             } = report

      assert handles == HexagonTpu.Stats.live_handles(report.native)
      assert is_integer(cost) and cost >= 0
      assert Monitor.tick(pid).tick == 2
    end

    test "measures dirty scheduler utilization over its window" do
      pid = start!(utilization_window_ms: 20)
      assert %{dirty_utilization: %{dirty_cpu: c, dirty_io: i, window_ms: 20}} = Monitor.tick(pid)
      assert c >= 0.0 and c <= 1.0 and i >= 0.0 and i <= 1.0
    end

    test "ticks periodically under a supervisor (named by default)" do
      pid = start_supervised!({Monitor, interval_ms: 20, utilization_window_ms: 5})
      assert Process.whereis(Monitor) == pid
      # Waits on the Monitor's own timer messages (traced as it receives them), not on a clock:
      # the call below queues behind the second :tick, so its report has counted it.
      :erlang.trace(pid, true, [:receive])
      assert_receive {:trace, ^pid, :receive, :tick}, 60_000
      assert_receive {:trace, ^pid, :receive, :tick}, 60_000
      :erlang.trace(pid, false, [:receive])
      assert %{tick: t} = Monitor.last_report()
      assert t >= 2
    end

    test "runs without :telemetry loaded, and with it" do
      # Either way a tick emits [:hexagon_tpu, :stats] or nothing, and never fails.
      pid = start!([])
      assert %{tick: 1} = Monitor.tick(pid)
      assert Process.alive?(pid)
    end

    test "a tick's cost leaves out its utilization window" do
      # Not a timing bound (that would flake on a loaded machine): the reported cost must not
      # contain the 300 ms the tick spends measuring utilization, which a tick's wall time does.
      pid = start!(utilization_window_ms: 300)

      for _ <- 1..3 do
        {wall_us, report} = :timer.tc(fn -> Monitor.tick(pid) end)
        assert is_integer(report.cost_us) and report.cost_us >= 0
        assert wall_us >= 300_000
        assert report.cost_us <= wall_us - 300_000, inspect({wall_us, report.cost_us})
      end
    end
  end

  describe "leak detector" do
    test "warns when handles are kept alive across intervals", %{bin: bin} do
      pid = start!(intervals: 3)
      Monitor.tick(pid)
      test = self()

      # The leaky "application": loads models every interval and keeps them in a list.
      leaker =
        spawn_link(fn ->
          leak_loop(bin, [], test)
        end)

      log =
        capture_log(fn ->
          for i <- 1..3 do
            send(leaker, :leak)
            assert_receive {:leaked, n} when n == 5 * i

            report = Monitor.tick(pid)

            if i < 3 do
              assert report.warnings == [], "tick #{i}: #{inspect(report.warnings)}"
            end
          end
        end)

      assert log =~ "HexagonTpu.Monitor: live_graphs grew at each of the last 3 intervals"
      assert log =~ "live_contexts grew"
      assert log =~ "a leak?"

      report = Monitor.last_report(pid)
      graph_leak = Enum.find(report.warnings, &match?(%{kind: :leak, metric: :live_graphs}, &1))
      assert %{intervals: 3, from: from, to: to} = graph_leak
      assert to - from == 15

      # logged once while it lasts ...
      send(leaker, :leak)
      assert_receive {:leaked, 20}
      refute capture_log(fn -> Monitor.tick(pid) end) =~ "live_graphs grew"
      assert Enum.any?(Monitor.last_report(pid).warnings, &match?(%{metric: :live_graphs}, &1))

      # ... and clears when the references go
      send(leaker, :release)
      assert_receive :released
      settle()
      assert Monitor.tick(pid).warnings |> Enum.filter(&(&1.metric in [:live_graphs])) == []
    end

    test "a healthy steady load does not warn", %{bin: bin} do
      pid = start!(intervals: 3)

      log =
        capture_log(fn ->
          for _ <- 1..10 do
            # every interval: models loaded, used and closed, or dropped for the GC
            models =
              for _ <- 1..5, do: HexagonTpu.load_model!({:binary, bin}, backend: :reference)

            for m <- models, _ <- 1..20, do: {:ok, _} = add(m)
            models |> Enum.take(3) |> Enum.each(&HexagonTpu.close/1)
            settle()
            assert Monitor.tick(pid).warnings == []
          end
        end)

      refute log =~ "HexagonTpu.Monitor"
    end

    test "memory growth needs the minimum growth" do
      # 1 byte minimum: any steadily growing figure is reported; kept binaries grow :binary
      pid = start!(intervals: 2, min_memory_growth: 1)
      Monitor.tick(pid)

      {kept, log} =
        with_log(fn ->
          Enum.reduce(1..2, [], fn _, kept ->
            kept = [:binary.copy(<<1>>, 4 * 1024 * 1024) | kept]
            Monitor.tick(pid)
            kept
          end)
        end)

      assert log =~ "BEAM binary memory grew at each of the last 2 intervals"
      assert length(kept) == 2

      # with the default 8 MiB minimum, 2 x 1 MiB is not reported
      pid2 = start!(intervals: 2, min_memory_growth: 8 * 1024 * 1024)
      Monitor.tick(pid2)

      {kept, log} =
        with_log(fn ->
          Enum.reduce(1..2, [], fn _, kept ->
            kept = [:binary.copy(<<1>>, 1024 * 1024) | kept]
            Monitor.tick(pid2)
            kept
          end)
        end)

      refute log =~ "BEAM binary memory"
      assert length(kept) == 2
    end
  end

  defp leak_loop(bin, kept, test) do
    receive do
      :leak ->
        more = for _ <- 1..5, do: HexagonTpu.load_model!({:binary, bin}, backend: :reference)
        kept = more ++ kept
        send(test, {:leaked, length(kept)})
        leak_loop(bin, kept, test)

      :release ->
        Enum.each(kept, &HexagonTpu.close/1)
        send(test, :released)
    end
  end

  describe "saturation detector" do
    test "warns when the dirty IO schedulers stay busy; not when idle", %{bin: bin} do
      pid = start!(intervals: 2, utilization_window_ms: 100, saturation_threshold: 0.5)

      idle_log = capture_log(fn -> for _ <- 1..2, do: Monitor.tick(pid) end)
      refute idle_log =~ "schedulers busy"
      assert Monitor.last_report(pid).warnings == []

      # One waiting execute per dirty IO scheduler (graphExecute sleeps 20 ms each time).
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:20000"}])
      n = :erlang.system_info(:dirty_io_schedulers)
      # scheduler: :dirty_io, asked for: other executes are submitted and hold no scheduler
      models =
        for _ <- 1..n,
            do: HexagonTpu.load_model!({:binary, bin}, runtime: rt, scheduler: :dirty_io)

      parent = self()

      workers =
        for m <- models do
          spawn_link(fn ->
            {:ok, _} = add(m)
            send(parent, :looping)
            busy_loop(m)
          end)
        end

      # every worker has had a whole execute and is in its next one (an event, not a sleep)
      for _ <- workers, do: assert_receive(:looping, 10_000)

      log = capture_log(fn -> for _ <- 1..2, do: Monitor.tick(pid) end)

      # a process killed inside a dirty NIF exits when the call returns: wait for it
      for w <- workers do
        ref = Process.monitor(w)
        Process.unlink(w)
        Process.exit(w, :kill)
        assert_receive {:DOWN, ^ref, _, _, _}, 5_000
      end

      Enum.each(models, &HexagonTpu.close/1)
      Runtime.close(rt)

      assert log =~ "HexagonTpu.Monitor: dirty_io schedulers busy at or above 0.5 for the last 2"

      assert [%{kind: :saturation, scheduler: :dirty_io, values: [a, b]}] =
               Monitor.last_report(pid).warnings

      assert a >= 0.5 and b >= 0.5
    end
  end

  defp busy_loop(m) do
    {:ok, _} = add(m)
    busy_loop(m)
  end
end
