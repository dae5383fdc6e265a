defmodule HexagonTpu.LifecycleTest do
  # Not async: it compares the process-wide live counters with a baseline.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Error, Graph, Runtime}

  setup do
    %{baseline: settle(), bin: build!(add_f32())}
  end

  defp run_add(g) do
    with {:ok, [y]} <- Graph.execute(g, add_inputs(), output: :binary) do
      {:ok, from_f32(y)}
    end
  end

  defp open_all(bin) do
    rt = Runtime.open!(backend: :reference)
    ctx = Context.load!(rt, {:binary, bin})
    {rt, ctx, Graph.open!(ctx)}
  end

  test "a graph outlives its dropped runtime and context variables", %{baseline: base, bin: bin} do
    # The parents live only in the opener process; the graph only in the user process. The
    # test process holds none of them, so each drop below is real garbage.
    test = self()
    queued = HexagonTpu.stats().reaper_queued

    user =
      spawn(fn ->
        receive do
          {:graph, g} ->
            send(test, :parents_dropped?)

            receive do
              :go -> send(test, {:result, run_add(g)})
            end
        end
      end)

    spawn(fn ->
      {_rt, _ctx, g} = open_all(bin)
      send(user, {:graph, g})
    end)

    assert_receive :parents_dropped?
    # the graph's resource keeps its context's and runtime's resources (closing a parent handle
    # cancels the submitted calls under it, so garbage collection never does before the graph
    # goes): nothing was handed to the reaper ...
    settle()
    assert HexagonTpu.stats().reaper_queued == queued

    # ... and the C core keeps both alive for the graph
    held = %{
      base
      | live_runtimes: base.live_runtimes + 1,
        live_contexts: base.live_contexts + 1,
        live_graphs: base.live_graphs + 1
    }

    assert wait_for_live(held) == held

    send(user, :go)
    assert_receive {:result, {:ok, [2.0, 3.0, 4.0, 5.0]}}
    # the user process has exited: the graph, then context and runtime, go
    assert wait_for_live(base) == base
  end

  test "close in every order, and use after close", %{baseline: base, bin: bin} do
    orders =
      for a <- [:rt, :ctx, :g],
          b <- [:rt, :ctx, :g],
          c <- [:rt, :ctx, :g],
          Enum.uniq([a, b, c]) == [a, b, c],
          do: [a, b, c]

    assert length(orders) == 6

    for order <- orders do
      {rt, ctx, g} = open_all(bin)
      handles = %{rt: {Runtime, rt}, ctx: {Context, ctx}, g: {Graph, g}}

      Enum.each(order, fn name ->
        {mod, h} = handles[name]
        assert mod.close(h) == :ok
        # the graph runs as long as its own handle is open, whatever the parents did
        if name != :g and :g not in Enum.take_while(order, &(&1 != name)) do
          assert run_add(g) == {:ok, [2.0, 3.0, 4.0, 5.0]}
        end
      end)

      # idempotent close; use after close is an error
      assert Graph.close(g) == :ok and Context.close(ctx) == :ok and Runtime.close(rt) == :ok
      assert {:error, %Error{reason: :closed}} = run_add(g)
      assert {:error, %Error{reason: :closed}} = Graph.open(ctx)
      assert {:error, %Error{reason: :closed}} = Context.load(rt, {:binary, bin})
      assert wait_for_live(base) == base, "order #{inspect(order)}"
    end
  end

  test "thousands of load/execute/close cycles return to the baseline", %{
    baseline: base,
    bin: bin
  } do
    rt = Runtime.open!(backend: :reference)
    before = HexagonTpu.stats()

    for _ <- 1..2000 do
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      {:ok, [2.0, 3.0, 4.0, 5.0]} = run_add(model)
      :ok = HexagonTpu.close(model)
    end

    # The same without close: garbage collection and the reaper do it.
    for _ <- 1..1000 do
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      {:ok, _} = run_add(model)
    end

    Runtime.close(rt)
    assert wait_for_live(base) == base
    s = HexagonTpu.stats()
    assert s.loads - before.loads == 3000
    assert s.executes - before.executes == 3000
    assert s.reaper_queued == s.reaper_closed
  end

  test "close while another process executes: the close does not wait", %{bin: bin} do
    rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:5000000"}])
    g = HexagonTpu.load_model!({:binary, bin}, runtime: rt, scheduler: :dirty_io)
    test = self()

    task =
      Task.async(fn ->
        result = run_add(g)
        send(test, {:executed_at, System.monotonic_time()})
        result
      end)

    # In flight: the task is inside the dirty NIF (HTPU_REF_LATENCY holds it in graphExecute
    # for 5 s, long enough that a starved test process still sees it), not merely scheduled.
    assert wait_until(fn ->
             match?(
               {:current_function, {HexagonTpu.NIF, :graph_execute, 4}},
               Process.info(task.pid, :current_function)
             )
           end)

    close_started = System.monotonic_time()
    :ok = Graph.close(g)
    closed_at = System.monotonic_time()

    # The documented outcomes for both orders: an execute that already holds the graph is
    # aborted by the close (:cancelled, naming the close, far from its 5 s stall: the reference
    # backend has execute signals), so the close does not wait for it to run out; one that the
    # close beat - possible only in the microseconds between entering the NIF and taking the
    # handle - returns :closed. Neither may hang or crash.
    close_ms = System.convert_time_unit(closed_at - close_started, :native, :millisecond)
    assert close_ms < 4000, "the close waited #{close_ms} ms for the stalled execute"

    case Task.await(task, 30_000) do
      {:error, %Error{reason: :cancelled, message: msg}} ->
        assert msg =~ "closed"
        assert_receive {:executed_at, _}

      {:error, %Error{reason: :closed}} ->
        :ok

      other ->
        flunk("unexpected execute result #{inspect(other)}")
    end

    assert {:error, %Error{reason: :closed}} = run_add(g)
    Runtime.close(rt)
  end

  describe "Runtime.shared/1" do
    # An option set of its own (startup_retries: 7), so other tests' shared runtimes are not
    # involved.
    @opts [backend: :reference, startup_retries: 7]

    test "concurrent first callers all get the one runtime that was opened" do
      Runtime.close_shared()
      # counts taken with GC and the reaper quiet, so no earlier test's runtime goes meanwhile
      before = settle()

      refs =
        1..32
        |> Enum.map(fn _ -> Task.async(fn -> Runtime.shared(@opts) end) end)
        |> Task.await_many(30_000)
        |> Enum.map(fn {:ok, rt} -> rt.ref end)
        |> Enum.uniq()

      assert length(refs) == 1
      # exactly one runtime was opened (none opened and closed again)
      assert settle().live_runtimes == before.live_runtimes + 1
      Runtime.close_shared()
    end

    test "load_model/2 racing close_shared/0 never returns a spurious :closed", %{bin: bin} do
      closer =
        Task.async(fn ->
          for _ <- 1..50 do
            Runtime.close_shared()
            Process.sleep(1)
          end
        end)

      loaders =
        for _ <- 1..4 do
          Task.async(fn ->
            for _ <- 1..50 do
              with {:ok, model} <- HexagonTpu.load_model({:binary, bin}, @opts) do
                HexagonTpu.close(model)
                :ok
              end
            end
          end)
        end

      Task.await(closer, 30_000)

      for task <- loaders do
        assert Enum.uniq(Task.await(task, 30_000)) == [:ok]
      end

      Runtime.close_shared()
    end

    test "each caller gets its own copy of the shared runtime, not one literal for all" do
      # A :persistent_term value is one literal that every reader points at; on OTP 25 one
      # passed on in a message and erased by close_shared/0 meanwhile could be freed while still
      # referenced (a NIF then read the freed resource). A copy per caller holds its own
      # reference. (The first call returns what it opened; the next two are lookups.)
      {:ok, _} = Runtime.shared(@opts)
      {:ok, a} = Runtime.shared(@opts)
      {:ok, b} = Runtime.shared(@opts)
      assert a.ref == b.ref
      refute :erts_debug.same(a, b), "both lookups returned the very same term"
      Runtime.close_shared()
    end

    test "close_shared/0 then shared/1 opens a fresh runtime" do
      {:ok, a} = Runtime.shared(@opts)
      Runtime.close_shared()
      {:ok, b} = Runtime.shared(@opts)
      assert a.ref != b.ref
      assert {:ok, ^b} = Runtime.shared(@opts)
      Runtime.close_shared()
    end
  end
end
