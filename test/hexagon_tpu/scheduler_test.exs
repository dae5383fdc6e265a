defmodule HexagonTpu.SchedulerTest do
  # Where executes run: `scheduler: :auto | :dirty_io | :normal`, per call and per model. Every
  # assertion is on a decision (the call's :scheduler, the counters), never on a duration; the
  # injected latencies only make a graph long by a wide margin over the 200 µs limit.
  # Not async: the counters are process-wide and latency rules travel through the OS
  # environment during Runtime.open/1 (the `env:` test hook).
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Graph, Runtime}

  @window 32
  @short_ns 200_000

  @big """
  graph big_f32
    input x f32 [1,20000]
    output y f32 [1,20000]
    op Relu x -> y
  """

  setup_all do
    %{bin: build!(add_f32())}
  end

  # where an add_f32 call ran, after checking its answer
  defp ran_on(model, opts \\ []) do
    {:ok, [y], stats} = add(model, [stats: true] ++ opts)
    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    stats.scheduler
  end

  defp counters do
    Map.take(
      HexagonTpu.stats(),
      ~w(executes_normal executes_dirty_io calls_submitted normal_declined_busy normal_declined_not_short
         normal_declined_resource normal_declined_other executes_declined)a
    )
  end

  defp delta(before), do: Map.new(counters(), fn {k, v} -> {k, v - before[k]} end)

  # A call of an idle graph that should reach the normal scheduler. Nothing in this test holds
  # the graph or needs a conversion block, but the execute gate is VM-wide: a context loaded
  # or freed anywhere (a finished test's models, reaped after GC) holds it for a moment, and a
  # call that would wait goes to dirty IO instead (docs/elixir.md: `:normal` is a preference).
  # So this asserts what is promised: it ran there, or it ran on dirty IO and was counted as
  # declined busy. Returns where it ran.
  defp ran_normal_unless_busy(model, opts \\ []) do
    before = counters()
    ran = ran_on(model, opts)

    # With execute signals a normal call is also bounded (the core's no-wait bound, short_ns x 4
    # or 1 ms): one that overran it was stopped and submitted (HTPU_DECLINE_STALLED, counted as
    # other), and the runtime's short path is demoted for a while after (not short).
    d = delta(before)

    if ran == :async,
      do:
        assert(
          d.normal_declined_busy + d.normal_declined_other + d.normal_declined_not_short >= 1,
          "submitted without a decline"
        )

    ran
  end

  # An :auto call: where its graph's window says, as far as promised. Returns where it ran.
  defp ran_as_window_says(model) do
    case auto_expect(model) do
      :normal ->
        ran_normal_unless_busy(model)

      :async ->
        assert ran_on(model) == :async
        :async
    end
  end

  # What :auto must decide for the next call of an idle graph, from its window as it is now.
  defp auto_expect(model) do
    {:ok, t} = Graph.timing(model)
    if t.window == @window and t.max_ns <= @short_ns, do: :normal, else: :async
  end

  # A call the core declines on the normal scheduler carries its outputs over to the dirty one
  # and takes its inputs again there (c_src/execute.c): the answer is the dirty call's, also for
  # inputs at odd offsets (copied for alignment on each side).
  test "a declined call is answered on the dirty scheduler, unaligned inputs too", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    odd = fn floats -> binary_part(<<0>> <> f32(floats), 1, 4 * length(floats)) end

    for _ <- 1..3 do
      before = counters()

      assert {:ok, [y], %{scheduler: :async}} =
               HexagonTpu.predict(model, [odd.([1, 2, 3, 4]), odd.([1, 1, 1, 1])],
                 output: :binary,
                 stats: true
               )

      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      d = delta(before)
      assert d.normal_declined_not_short == 1
      assert d.calls_submitted == 1
    end

    HexagonTpu.close(model)
  end

  test "unknown first, then short: :auto moves the graph to the normal scheduler", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    assert {:ok, %{samples: 0, window: 0, max_ns: 0, last_ns: 0}} = Graph.timing(model)
    before = counters()

    # The duration is unknown until the window holds 32 calls: all of those go dirty.
    for _ <- 1..@window, do: assert(ran_on(model) == :async)

    d = delta(before)
    assert d.normal_declined_not_short == @window
    assert d.calls_submitted == @window
    assert d.executes_normal == 0
    assert {:ok, %{samples: @window, window: @window}} = Graph.timing(model)

    # From here each call goes where the window says; a call of a few microseconds leaves it
    # short, so (barring a scheduler hiccup over 200 µs) the normal scheduler is reached.
    decisions = for _ <- 1..200, do: ran_as_window_says(model)

    # a held gate declines a call now and then, not 200 in a row
    assert :normal in decisions
    assert delta(before).executes_normal == Enum.count(decisions, &(&1 == :normal))
  end

  test "a graph that becomes slow leaves the normal scheduler after at most one overrun", %{
    bin: bin
  } do
    # Calls 1..59 are fast; from the 60th on, each sleeps 2 ms in graphExecute (10x the limit).
    rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:2000:60"}])
    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
    before = counters()

    # Each call goes where the window says (the first 32: unknown, dirty) ...
    calls = for i <- 1..66, do: {i, ran_as_window_says(model)}

    # ... so of the slow calls at most the first reaches a normal scheduler (when the window
    # was short just before it, which on a quiet machine it is), and none after it does.
    assert length(for {i, :normal} <- calls, i >= 60, do: i) <= 1
    assert Enum.all?(for {i, s} <- calls, i > 60, do: s == :async)
    {:ok, t} = Graph.timing(model)
    assert t.max_ns > @short_ns
    d = delta(before)
    assert d.executes_normal == Enum.count(calls, &(elem(&1, 1) == :normal))
    assert d.normal_declined_not_short >= @window + 6
    Runtime.close(rt)
  end

  test "a long graph never runs on the normal scheduler with :auto", %{bin: bin} do
    rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:1000"}])
    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
    before = counters()
    for _ <- 1..(@window + 3), do: assert(ran_on(model) == :async)
    {:ok, t} = Graph.timing(model)
    assert t.window == @window and t.max_ns > @short_ns
    d = delta(before)
    assert d.executes_normal == 0
    assert d.normal_declined_not_short == @window + 3
    # Forced, it does run there: the caller said the graph is short enough.
    ran_normal_unless_busy(model, scheduler: :normal)
    Runtime.close(rt)
  end

  test ":normal on a busy graph does not wait on the normal scheduler", %{bin: bin} do
    rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:1500000"}])
    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
    holder = Task.async(fn -> ran_on(model, scheduler: :dirty_io) end)

    assert wait_until(fn ->
             match?(
               {:current_function, {HexagonTpu.NIF, :graph_execute, 4}},
               Process.info(holder.pid, :current_function)
             ) and HexagonTpu.stats().executes_in_flight >= 1
           end)

    before = counters()
    # The graph is held: the call is declined at the trylock and moves to dirty IO, where it
    # waits its turn; it never queues on the normal scheduler.
    assert ran_on(model, scheduler: :normal) == :async
    assert Task.await(holder, 30_000) == :dirty_io
    d = delta(before)
    assert d.normal_declined_busy == 1
    assert d.executes_normal == 0
    # the holder's call (counted when it answers), and this one submitted
    assert d.executes_dirty_io == 1
    assert d.calls_submitted == 1
    Runtime.close(rt)
  end

  test "two handles of one graph share its lock and its timing", %{bin: bin} do
    # Graph.open/2 twice on one context: two handles of one QNN graph. While a call through
    # `a` executes, calls through `b` find the graph busy and move to dirty IO, :normal and
    # :auto alike; they never run beside it or wait for it on a normal scheduler.
    rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:1000000"}])
    ctx = HexagonTpu.Context.load!(rt, {:binary, bin})
    a = Graph.open!(ctx)
    b = Graph.open!(ctx)
    holder = Task.async(fn -> ran_on(a, scheduler: :dirty_io) end)

    assert wait_until(fn ->
             match?(
               {:current_function, {HexagonTpu.NIF, :graph_execute, 4}},
               Process.info(holder.pid, :current_function)
             ) and HexagonTpu.stats().executes_in_flight >= 1
           end)

    before = counters()
    through_b = for s <- [:normal, :auto], do: Task.async(fn -> ran_on(b, scheduler: s) end)
    assert Task.await_many(through_b, 30_000) == [:async, :async]
    assert Task.await(holder, 30_000) == :dirty_io
    d = delta(before)
    # Declined because the graph was busy: not because b's own window was empty.
    assert d.normal_declined_busy == 2
    assert d.normal_declined_not_short == 0
    assert d.executes_normal == 0
    # One window for the graph: the three calls, whichever handle they came through.
    {:ok, ta} = Graph.timing(a)
    assert ta.samples == 3
    assert Graph.timing(b) == {:ok, ta}
    # Closing a context handle cancels the submitted calls of its graphs (the C core's
    # htpu_context_close): kept open (and referenced) until the calls are done.
    HexagonTpu.Context.close(ctx)
    Runtime.close(rt)
  end

  test "per-model and per-call options choose; the call's option wins", %{bin: bin} do
    dirty = HexagonTpu.load_model!({:binary, bin}, backend: :reference, scheduler: :dirty_io)
    assert Map.get(dirty, :scheduler) == :dirty_io
    for _ <- 1..(@window + 2), do: assert(ran_on(dirty) == :dirty_io)
    ran_normal_unless_busy(dirty, scheduler: :normal)

    normal = HexagonTpu.load_model!({:binary, bin}, backend: :reference, scheduler: :normal)
    # Forced: no window needed.
    ran_normal_unless_busy(normal)
    assert ran_on(normal, scheduler: :dirty_io) == :dirty_io
    assert ran_on(normal, scheduler: :auto) == :async

    {:ok, rt} = Runtime.shared(backend: :reference)
    ctx = HexagonTpu.Context.load!(rt, {:binary, bin})
    assert {:ok, g} = Graph.open(ctx)
    assert Map.get(g, :scheduler) == :auto
    assert {:ok, g} = Graph.open(ctx, scheduler: :normal)
    assert Map.get(g, :scheduler) == :normal
  end

  test "large inputs and outputs and per-call profile votes stay dirty" do
    model = HexagonTpu.load_model!({:binary, build!(@big)}, backend: :reference)
    x = :binary.copy(<<1.0::float-32-native>>, 20_000)
    before = counters()

    {:ok, [_], %{scheduler: :async}} =
      HexagonTpu.predict(model, [x], output: :binary, stats: true, scheduler: :normal)

    assert delta(before).normal_declined_other == 1

    small = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)

    {:ok, [_], %{scheduler: :async}} =
      HexagonTpu.predict(small, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])],
        output: :binary,
        stats: true,
        scheduler: :normal,
        perf_profile: :burst
      )
  end

  test "a declined normal call reports its share of the timeslice before it moves" do
    # enif_consume_timeslice(env, 1) costs the process 40 reductions (1% of 4000): the normal
    # attempt that declined (here at the 64 KiB bound) held the scheduler too, so the same call
    # costs at least that much more than one that went to dirty IO directly. Counted, not timed.
    model = HexagonTpu.load_model!({:binary, build!(@big)}, backend: :reference)
    x = :binary.copy(<<1.0::float-32-native>>, 20_000)

    call = fn scheduler ->
      {:ok, [_], %{scheduler: _}} =
        HexagonTpu.predict(model, [x], output: :binary, stats: true, scheduler: scheduler)
    end

    reds = fn scheduler ->
      {:reductions, r0} = Process.info(self(), :reductions)
      call.(scheduler)
      {:reductions, r1} = Process.info(self(), :reductions)
      r1 - r0
    end

    # Warm: code loaded, the same path taken once each. Then 10 of each, compared at their
    # minimum: a call sometimes costs a few reductions more (a GC, a message), never fewer.
    reds.(:dirty_io)
    reds.(:normal)
    pairs = for _ <- 1..10, do: {reds.(:dirty_io), reds.(:normal)}
    extra = Enum.min(for {_, n} <- pairs, do: n) - Enum.min(for {d, _} <- pairs, do: d)
    # 40 when the declined attempt consumed 1%; 0 when it did not.
    assert extra >= 30, "the declined calls cost #{extra} more reductions: #{inspect(pairs)}"
  end

  test "a graph's first converting call allocates its block on the dirty scheduler" do
    # scale_u8 takes u8: f32 inputs are quantized into a block of the graph's scratch pool.
    # Allocating one (FastRPC memory when there is any) and registering it are left to the
    # dirty call; the next normal call converts in the block that call left idle.
    model =
      HexagonTpu.load_model!({:binary, build!(two_graphs())},
        backend: :reference,
        graph: "scale_u8",
        scheduler: :normal
      )

    x = f32([1.0, 2.0, 3.0, 4.0])
    before = counters()

    {:ok, [y1], %{scheduler: :async}} =
      HexagonTpu.predict(model, [x], output: :binary, stats: true)

    d = delta(before)
    assert d.normal_declined_resource == 1
    assert d.executes_declined == 1
    assert d.executes_normal == 0

    # The block is idle now: the next call converts in it on the normal scheduler, unless the
    # VM-wide gate is held (see ran_normal_unless_busy/2); it never declines for a resource again.
    {:ok, [y2], %{scheduler: ran}} = HexagonTpu.predict(model, [x], output: :binary, stats: true)

    assert y2 == y1
    d = delta(before)
    assert d.normal_declined_resource == 1
    assert ran == :normal or d.normal_declined_busy >= 1
  end

  test "errors from the normal path are the same errors", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference, scheduler: :normal)
    nan = <<0::32, 0::32, 0::32, 0x7FC00000::32-native>>

    # add_f32 takes f32 as is (no quantization, so a NaN is fine); a wrong size is a mismatch
    assert {:ok, _} = HexagonTpu.predict(model, [nan, f32([1, 1, 1, 1])], output: :binary)

    assert {:error, %Error{reason: :mismatch}} =
             HexagonTpu.predict(model, [f32([1, 2, 3]), f32([1, 1, 1, 1])])

    :ok = HexagonTpu.close(model)

    assert {:error, %Error{reason: :closed}} =
             HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])])

    assert {:error, %Error{reason: :closed}} = Graph.timing(model)
  end

  test "bad scheduler options name what was expected", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)

    assert {:error, %Error{reason: :invalid_option, message: msg}} =
             HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])], scheduler: :dirty)

    assert msg =~ "expected :scheduler to be :auto, :async, :normal or :dirty_io, got :dirty"

    assert {:error, %Error{reason: :invalid_option, message: msg}} =
             HexagonTpu.load_model({:binary, bin}, backend: :reference, scheduler: :fast)

    assert msg =~ "HexagonTpu.load_model/2: expected :scheduler to be"
  end
end
