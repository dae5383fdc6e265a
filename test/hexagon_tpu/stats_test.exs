defmodule HexagonTpu.StatsTest do
  # Not async: the live counters and the dirty schedulers are process-wide, and the latency
  # rules travel through the OS environment during Runtime.open/1 (the `env:` test hook).
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Runtime, Stats}

  @keys ~w(live_runtimes live_contexts live_graphs executes execute_errors execute_ns_total
           execute_ns_last loads load_ns_total quantize_ns_total dequantize_ns_total recoveries
           recovery_failures live_shared_buffers mem_registrations startup_retries
           executes_in_flight executes_waiting executes_cancelled)a

  setup_all do
    %{bin: build!(add_f32())}
  end

  describe "native/0" do
    test "has every C counter as a non-negative integer" do
      stats = Stats.native()

      for key <- @keys do
        assert is_integer(Map.fetch!(stats, key)) and stats[key] >= 0, "#{key}"
      end

      assert Stats.live_handles(stats) ==
               stats.live_runtimes + stats.live_contexts + stats.live_graphs
    end

    test "shows executes queued behind another execute of the same model", %{bin: bin} do
      # 300 ms per execute, three callers of one model: one runs, the others queue
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:300000"}])
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      tasks = for _ <- 1..3, do: Task.async(fn -> add(model) end)

      assert wait_until(fn ->
               s = Stats.native()
               s.executes_in_flight == 1 and s.executes_waiting >= 1
             end),
             "never saw one execute running and another waiting: #{inspect(Stats.native())}"

      results = Task.await_many(tasks, 30_000)
      assert Enum.all?(results, &match?({:ok, [_]}, &1)), inspect(results)
      s = Stats.native()
      assert {s.executes_in_flight, s.executes_waiting} == {0, 0}
      HexagonTpu.close(model)
      Runtime.close(rt)
    end

    test "an execute queued by a process killed meanwhile is skipped, and counted",
         %{bin: bin} do
      # 1 s per execute: one caller runs, three more queue behind it and are killed there
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:1000000"}])
      # the synchronous dirty path's skip (submitted calls of a killed caller: faults_async_test)
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt, scheduler: :dirty_io)
      before = Stats.native()
      first = Task.async(fn -> add(model) end)
      assert wait_until(fn -> Stats.native().executes_in_flight == 1 end)

      victims =
        for _ <- 1..3 do
          pid = spawn(fn -> add(model) end)
          {pid, Process.monitor(pid)}
        end

      assert wait_until(fn -> Stats.native().executes_waiting == 3 end),
             "the three never queued: #{inspect(Stats.native())}"

      for {pid, _} <- victims, do: Process.exit(pid, :kill)
      for {pid, ref} <- victims, do: assert_receive({:DOWN, ^ref, :process, ^pid, :killed}, 5_000)
      assert {:ok, [_]} = Task.await(first, 30_000)
      # The killed callers are gone (their monitors fired at once), but their calls stay queued
      # in the NIF until their turn: wait until all four calls are accounted for, run or skipped.
      assert wait_until(fn -> settled(before) == 4 end, 30_000),
             "not all four calls ended: #{inspect(Stats.native())}"

      now = Stats.native()
      # only the first ran
      assert now.executes - before.executes == 1
      assert now.executes_cancelled - before.executes_cancelled == 3
      assert now.execute_errors == before.execute_errors
      assert {now.executes_in_flight, now.executes_waiting} == {0, 0}
      HexagonTpu.close(model)
      Runtime.close(rt)
    end

    test "counts executes, their errors and the graphExecute time", %{bin: bin} do
      model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
      before = Stats.native()
      {:ok, _, %{execute_ns: ns}} = add(model, stats: true)
      now = Stats.native()

      assert now.executes == before.executes + 1
      assert now.execute_ns_last == ns
      assert now.execute_ns_total >= before.execute_ns_total + ns

      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", "graphExecute:1:1002"}])
      faulty = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      {:error, _} = add(faulty)
      assert Stats.native().execute_errors == now.execute_errors + 1
      Enum.each([model, faulty], &HexagonTpu.close/1)
    end
  end

  # Calls since `before` that ran (executes) or were skipped (executes_cancelled).
  defp settled(before) do
    now = Stats.native()

    now.executes - before.executes +
      Map.get(now, :executes_cancelled, 0) - Map.get(before, :executes_cancelled, 0)
  end

  describe "leak guard: live counts return to baseline" do
    setup do
      # load_model/2 keeps one shared runtime per option set: part of the baseline
      {:ok, _} = Runtime.shared(backend: :reference)
      %{baseline: settle()}
    end

    test "across 2000 load/predict/close cycles", %{baseline: base, bin: bin} do
      for _ <- 1..2000 do
        model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
        {:ok, _} = add(model)
        :ok = HexagonTpu.close(model)
      end

      assert wait_for_live(base) == base
    end

    test "across 2000 load/predict cycles freed by garbage collection only",
         %{baseline: base, bin: bin} do
      queued = Stats.native().reaper_queued

      # Batches in short-lived processes: every handle becomes garbage when its process exits.
      for _ <- 1..20 do
        task =
          Task.async(fn ->
            for _ <- 1..100 do
              model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
              {:ok, _} = add(model)
            end

            :ok
          end)

        :ok = Task.await(task)
      end

      assert wait_for_live(base) == base
      # they went through the reaper (GC), not close/1
      assert Stats.native().reaper_queued >= queued + 2000
    end

    test "across 500 runtime/context/graph open-and-drop cycles", %{baseline: base, bin: bin} do
      for i <- 1..500 do
        rt = Runtime.open!(backend: :reference)
        ctx = HexagonTpu.Context.load!(rt, {:binary, bin})
        g = HexagonTpu.Graph.open!(ctx)
        {:ok, _} = add(g)
        # half closed explicitly, half left to GC
        if rem(i, 2) == 0, do: Enum.each([g, ctx, rt], &close/1)
      end

      assert wait_for_live(base) == base
    end
  end

  defp close(%HexagonTpu.Graph{} = g), do: HexagonTpu.Graph.close(g)
  defp close(%HexagonTpu.Context{} = c), do: HexagonTpu.Context.close(c)
  defp close(%Runtime{} = r), do: Runtime.close(r)

  describe "dirty_utilization/1" do
    test "reads near zero when idle; returns the window" do
      settle()
      u = Stats.dirty_utilization(200)
      assert %{dirty_cpu: cpu, dirty_io: io, window_ms: 200} = u
      assert is_float(cpu) and is_float(io)
      assert cpu < 0.1, inspect(u)
      assert io < 0.1, inspect(u)
    end

    test "leaves scheduler_wall_time as it found it" do
      # off before -> off after
      assert :erlang.statistics(:scheduler_wall_time_all) == :undefined
      Stats.dirty_utilization(10)
      assert :erlang.statistics(:scheduler_wall_time_all) == :undefined

      # on (enabled by another process) before -> still on after, its counters not reset
      test = self()

      owner =
        spawn(fn ->
          :erlang.system_flag(:scheduler_wall_time, true)
          send(test, :enabled)
          Process.sleep(:infinity)
        end)

      assert_receive :enabled
      before = Map.new(:erlang.statistics(:scheduler_wall_time_all), fn {id, _, t} -> {id, t} end)
      Stats.dirty_utilization(10)
      after_ = :erlang.statistics(:scheduler_wall_time_all)
      assert is_list(after_)
      for {id, _active, total} <- after_, do: assert(total >= before[id])

      # the flag is counted per process: it goes away with its last owner (asynchronously, so
      # wait for the exit and then, bounded, for the flag)
      ref = Process.monitor(owner)
      Process.exit(owner, :kill)
      assert_receive {:DOWN, ^ref, _, _, _}, 5_000
      assert wall_time_off?(500), "scheduler_wall_time still on after its only owner exited"
    end

    test "rejects a bad window" do
      assert_raise ArgumentError, ~r/positive integer/, fn -> Stats.dirty_utilization(0) end
      assert_raise ArgumentError, fn -> Stats.dirty_utilization(1.5) end
    end

    # Executes run on dirty IO schedulers. A dirty scheduler running a NIF is busy for the
    # whole call, whether it computes or waits: utilization is occupancy, not CPU. Both loads
    # below fill the dirty IO schedulers; the first uses almost no CPU (the reference backend
    # sleeps in graphExecute, as a board's execute waits for the DSP), the second computes.
    test "a waiting load (graphExecute sleeping) occupies the dirty IO schedulers",
         %{bin: bin} do
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:20000"}])
      # scheduler: :dirty_io, asked for: other executes are submitted and hold no scheduler
      models =
        for _ <- 1..dirty_io(),
            do: HexagonTpu.load_model!({:binary, bin}, runtime: rt, scheduler: :dirty_io)

      {u, cpu_share} = under_load(models, &add/1, fn -> measure(300) end)

      assert u.dirty_io > 0.6, inspect(u)
      assert u.dirty_cpu < 0.2, inspect(u)
      # ... while the OS process used little CPU meanwhile (when /proc is there to say)
      if cpu_share, do: assert(cpu_share < 0.5, "cpu share #{cpu_share}")
      Runtime.close(rt)
    end

    test "a CPU-heavy load occupies the dirty IO schedulers, not the dirty CPU ones" do
      # FullyConnected [64,512] x [512,512]: ~17M multiply-adds, ~15 ms per execute
      w = Path.join(tmp_dir!(), "heavy_w_#{System.unique_integer([:positive])}.bin")
      File.write!(w, for(i <- 1..(512 * 512), into: <<>>, do: <<rem(i, 7) / 7::float-32-little>>))

      heavy =
        build!("""
        graph heavy
          input x f32 [64,512]
          static w f32 [512,512] data_file=#{w}
          output y f32 [64,512]
          op FullyConnected x w -> y
        """)

      File.rm!(w)
      x = :binary.copy(<<1.0::float-32-native>>, 64 * 512)
      rt = Runtime.open!(backend: :reference)

      models =
        for _ <- 1..dirty_io(),
            do: HexagonTpu.load_model!({:binary, heavy}, runtime: rt, scheduler: :dirty_io)

      run = fn m -> HexagonTpu.predict(m, [x], output: :binary) end

      idle = Stats.dirty_utilization(100)
      {u, _} = under_load(models, run, fn -> measure(300) end)

      assert u.dirty_io > 0.6, inspect(u)
      assert u.dirty_io > idle.dirty_io + 0.5, "idle #{inspect(idle)}, loaded #{inspect(u)}"
      assert u.dirty_cpu < 0.2, inspect(u)
      Runtime.close(rt)
    end
  end

  defp wall_time_off?(0), do: false

  defp wall_time_off?(tries) do
    :erlang.statistics(:scheduler_wall_time_all) == :undefined or
      (Process.sleep(10) && wall_time_off?(tries - 1))
  end

  defp dirty_io, do: :erlang.system_info(:dirty_io_schedulers)

  # Runs `fun` on each model in a loop, one process per model, while `measure` runs.
  defp under_load(models, fun, measure) do
    parent = self()

    workers =
      for m <- models do
        spawn_link(fn ->
          send(parent, {:started, self()})
          loop(m, fun)
        end)
      end

    for w <- workers, do: assert_receive({:started, ^w})
    # let every worker get into its first execute
    Process.sleep(30)
    result = measure.()
    stop(workers)
    # Closed here, not left to GC: ExUnit does not wait for a test process to finish exiting,
    # so handles it drops could still be alive when the next test takes its baseline.
    Enum.each(models, &HexagonTpu.close/1)
    result
  end

  # A process killed inside a dirty NIF exits (and lets its handles go) only when the call
  # returns: wait for that, so later tests' baselines do not see these models.
  defp stop(workers) do
    for w <- workers do
      ref = Process.monitor(w)
      Process.unlink(w)
      Process.exit(w, :kill)
      assert_receive {:DOWN, ^ref, _, _, _}, 5_000
    end
  end

  defp loop(m, fun) do
    {:ok, _} = fun.(m)
    loop(m, fun)
  end

  # Utilization over the window, and the OS process's CPU time over the same window as a share
  # of one core (nil without /proc).
  defp measure(ms) do
    cpu0 = cpu_ticks()
    t0 = System.monotonic_time(:millisecond)
    u = Stats.dirty_utilization(ms)
    elapsed = System.monotonic_time(:millisecond) - t0
    cpu1 = cpu_ticks()
    share = if cpu0 && cpu1, do: (cpu1 - cpu0) * 10 / elapsed, else: nil
    {u, share}
  end

  # utime + stime of this OS process in clock ticks (USER_HZ, 100 on Linux).
  defp cpu_ticks do
    with {:ok, stat} <- File.read("/proc/self/stat"),
         [_, rest] <- String.split(stat, ") ", parts: 2),
         fields <- String.split(rest),
         {utime, ""} <- Integer.parse(Enum.at(fields, 11)),
         {stime, ""} <- Integer.parse(Enum.at(fields, 12)) do
      utime + stime
    else
      _ -> nil
    end
  end

  describe "memory/0" do
    test "BEAM binary and total memory, OS resident memory on Linux" do
      m = Stats.memory()
      assert %{binary: b, total: t, rss: rss} = m
      assert is_integer(b) and b > 0
      assert is_integer(t) and t >= b

      case :os.type() do
        {:unix, :linux} ->
          assert is_integer(rss)
          # the BEAM's allocations are resident (most of them at least)
          assert rss > 10 * 1024 * 1024
          {:ok, status} = File.read("/proc/self/status")
          [_, kb] = Regex.run(~r/VmRSS:\s+(\d+) kB/, status)
          vm_rss = String.to_integer(kb) * 1024
          assert abs(rss - vm_rss) < 16 * 1024 * 1024

        _ ->
          assert rss == nil
      end
    end

    test "outputs are refc binaries: kept outputs show in binary memory" do
      model =
        HexagonTpu.load_model!(
          {:binary,
           build!("""
           graph relu_big
             input x f32 [64,512]
             output y f32 [64,512]
             op Relu x -> y
           """)},
          backend: :reference
        )

      x = :binary.copy(<<1.0::float-32-native>>, 64 * 512)
      :erlang.garbage_collect()
      before = Stats.memory().binary
      kept = for _ <- 1..100, do: HexagonTpu.predict!(model, [x], output: :binary)
      # 100 outputs of 128 KiB each
      assert Stats.memory().binary >= before + 100 * 128 * 1024 * 0.9
      assert length(kept) == 100
      HexagonTpu.close(model)
    end
  end
end
