defmodule HexagonTpu.WaitsTest do
  # Every wait honours the call's deadline (the execute gate, a recovery), and many callers
  # wait instead of failing (no silent queue limit). Stalls come from the reference backend's
  # control API (process-wide), so not async. Order is asserted through events (a load still
  # running when a call returns), durations only with seconds of margin.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Runtime}

  setup_all do
    %{bin: build!(add_f32()), two: build!(two_graphs())}
  end

  setup do
    on_exit(&reset_ref_controls/0)
  end

  defp model(bin, opts \\ []),
    do:
      HexagonTpu.load_model!(
        {:binary, bin},
        [runtime: Runtime.open!(backend: :reference), graph: "add_f32"] ++ opts
      )

  # A load on a runtime of its own, held 3 s inside contextCreateFromBinary (so holding the
  # execute gate); returns once the gate is held, with the load's task.
  defp hold_gate_with_a_load(bin) do
    ref_latency("contextCreateFromBinary", 3_000_000)
    rt = Runtime.open!(backend: :reference)
    task = Task.async(fn -> HexagonTpu.Context.load(rt, {:binary, bin}) end)
    wait_until(fn -> HexagonTpu.stats().gate_writers >= 1 end)
    task
  end

  defp timed_call(:auto, m), do: HexagonTpu.predict(m, add_inputs(), timeout: 200)

  defp timed_call(:dirty_io, m),
    do: HexagonTpu.predict(m, add_inputs(), timeout: 200, scheduler: :dirty_io)

  defp timed_call(:async, m) do
    {:ok, call} = HexagonTpu.predict_async(m, add_inputs(), timeout: 200)
    HexagonTpu.await(call)
  end

  # two rows of each input
  defp timed_call(:batch, m),
    do:
      HexagonTpu.predict_batch(m, [f32(Enum.to_list(1..8)), f32(List.duplicate(0, 8))],
        timeout: 200
      )

  describe "a deadline holds at the execute gate" do
    for path <- [:auto, :dirty_io, :async, :batch] do
      @path path
      test "#{path}: timeout: 200 answers :timeout while another runtime's load holds the gate",
           %{bin: bin, two: two} do
        m = model(bin)
        # known short, so :auto tries the short path first: declined at the gate, then submitted
        for _ <- 1..40, do: assert({:ok, _} = add(m))
        task = hold_gate_with_a_load(two)
        t0 = System.monotonic_time(:millisecond)
        result = timed_call(@path, m)
        took = System.monotonic_time(:millisecond) - t0
        load_done_then = Task.yield(task, 0)
        assert {:ok, _ctx} = Task.await(task, 10_000)
        assert {:error, %Error{reason: :timeout} = e} = result
        assert load_done_then == nil, "the call returned only after the load (#{took} ms)"
        assert e.message =~ "while it waited for the execute gate"
        assert took < 2_500
        ref_latency("contextCreateFromBinary", 0)
        assert {:ok, [y]} = add(m)
        assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      end
    end
  end

  test "a hung execute and a waiting load do not freeze another model", %{two: two} do
    rt = Runtime.open!(backend: :reference)
    a = HexagonTpu.load_model!({:binary, two}, runtime: rt, graph: "add_f32")
    c = HexagonTpu.load_model!({:binary, two}, runtime: rt, graph: "scale_u8")
    graph_latency("add_f32", 5_000_000)
    hung = Task.async(fn -> add(a) end)
    wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end)

    load =
      Task.async(fn ->
        HexagonTpu.Context.load(Runtime.open!(backend: :reference), {:binary, two})
      end)

    wait_until(fn -> HexagonTpu.stats().gate_writers >= 1 end)
    x = f32([1.0, 2.0, -1.0, 0.5])
    assert {:ok, [y]} = HexagonTpu.predict(c, [x], output: :binary)
    assert {:ok, [y2]} = HexagonTpu.predict(c, [x], timeout: 2_000, output: :binary)
    assert Task.yield(hung, 0) == nil and Task.yield(load, 0) == nil
    assert_close(from_f32(y), [1.0, 4.0, -3.0, 2.0], 0.06)
    assert y2 == y
    assert {:ok, _} = Task.await(hung, 10_000)
    assert {:ok, _} = Task.await(load, 10_000)
  end

  test "close/1 behind a hung model returns at once; the free comes when the execute ends",
       %{two: two} do
    rt = Runtime.open!(backend: :reference)
    a = HexagonTpu.load_model!({:binary, two}, runtime: rt, graph: "add_f32")
    other = HexagonTpu.load_model!({:binary, build!(add_f32())}, runtime: rt)
    base = HexagonTpu.stats()
    graph_latency("add_f32", 3_000_000)
    hung = Task.async(fn -> add(a) end)
    wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end)
    t0 = System.monotonic_time(:millisecond)
    :ok = HexagonTpu.close(other)
    took = System.monotonic_time(:millisecond) - t0

    assert Task.yield(hung, 0) == nil,
           "the close returned only after the hung execute (#{took} ms)"

    assert HexagonTpu.stats().frees_deferred == base.frees_deferred + 1
    assert {:ok, _} = Task.await(hung, 10_000)
    # (other tests' garbage may be reaped meanwhile: at most, not exactly, one fewer)
    assert wait_until(
             fn -> HexagonTpu.stats().live_contexts <= base.live_contexts - 1 end,
             15_000
           )

    # a is used up to here: unreferenced, a garbage collection during the wait could free its
    # context instead of other's and meet the count above
    HexagonTpu.close(a)
  end

  test "load_model's :timeout bounds opening a new shared runtime behind a hung model",
       %{two: two, bin: bin} do
    a =
      HexagonTpu.load_model!({:binary, two},
        runtime: Runtime.open!(backend: :reference),
        graph: "add_f32"
      )

    graph_latency("add_f32", 3_000_000)
    hung = Task.async(fn -> add(a) end)
    wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end)
    # options no shared runtime has yet: one is opened for this load
    opts = [backend: :reference, startup_retries: 7, graph: "add_f32", timeout: 300]
    assert {:error, %Error{reason: :timeout} = e} = HexagonTpu.load_model({:binary, bin}, opts)
    assert Task.yield(hung, 0) == nil
    assert e.message =~ "opening the runtime passed its 300 ms limit"
    assert {:ok, _} = Task.await(hung, 10_000)
    assert {:ok, m} = HexagonTpu.load_model({:binary, bin}, opts)
    HexagonTpu.close(m)
  end

  describe "many callers wait" do
    test "1,000 concurrent predict/3 callers on one model, default options: every answer right",
         %{bin: bin} do
      m = model(bin)
      stall(1_000)

      results =
        1..1_000
        |> Enum.map(fn i ->
          Task.async(fn ->
            a = [i, i + 1, i + 2, i + 3] |> Enum.map(&(&1 * 1.0))
            {i, HexagonTpu.predict(m, [f32(a), f32([0.5, 0.25, 0.125, 0.0])], output: :binary)}
          end)
        end)
        |> Task.await_many(120_000)

      for {i, r} <- results do
        assert {:ok, [y]} = r
        assert from_f32(y) == [i + 0.5, i + 1.25, i + 2.125, i + 3.0]
      end
    end

    test "stream/3 with in_flight: 1000 fails none of its own elements", %{bin: bin} do
      m = model(bin)
      stall(200)
      inputs = for i <- 1..1_500, do: [f32([i * 1.0, 0.0, 0.0, 0.0]), f32([1.0, 1.0, 1.0, 1.0])]

      results =
        m |> HexagonTpu.stream(inputs, in_flight: 1_000, output: :binary) |> Enum.to_list()

      assert length(results) == 1_500

      for {r, i} <- Enum.with_index(results, 1) do
        assert {:ok, [y]} = r
        assert hd(from_f32(y)) == i + 1.0
      end
    end

    test "a model's :queue_limit: one more caller gets :busy naming the option; stream/3 waits for room instead",
         %{bin: bin} do
      m = model(bin, queue_limit: 2)
      stall(2_000_000)
      {:ok, first} = HexagonTpu.predict_async(m, add_inputs())
      wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end)
      {:ok, c2} = HexagonTpu.predict_async(m, add_inputs())
      {:ok, c3} = HexagonTpu.predict_async(m, add_inputs())
      assert {:error, %Error{reason: :busy} = e} = HexagonTpu.predict_async(m, add_inputs())
      assert e.message =~ "queue of 2 calls is full"
      assert e.message =~ ":queue_limit"
      stall(0)
      for c <- [first, c2, c3], do: assert({:ok, _} = HexagonTpu.await(c))
      stall(1_000)
      inputs = for i <- 1..40, do: [f32([i * 1.0, 0.0, 0.0, 0.0]), f32([0.0, 0.0, 0.0, 0.0])]
      results = m |> HexagonTpu.stream(inputs, in_flight: 20, output: :binary) |> Enum.to_list()
      assert for({:ok, [y]} <- results, do: hd(from_f32(y))) == Enum.map(1..40, &(&1 * 1.0))
    end

    test "a bad :queue_limit is an :invalid_option error", %{bin: bin} do
      for bad <- [0, -1, 2 ** 32, "10", :none] do
        assert {:error, %Error{reason: :invalid_option} = e} =
                 HexagonTpu.load_model({:binary, bin}, backend: :reference, queue_limit: bad)

        assert e.message =~ ":queue_limit"
      end
    end
  end

  describe "the smaller items" do
    test "await/2 takes a timeout of 2^32 ms and more", %{bin: bin} do
      m = model(bin)
      {:ok, call} = HexagonTpu.predict_async(m, add_inputs(), output: :binary)
      assert {:ok, [y]} = HexagonTpu.await(call, 2 ** 32 + 5)
      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      {:ok, call} = HexagonTpu.predict_async(m, add_inputs())
      assert {:ok, _} = HexagonTpu.await(call, 2 ** 40)
    end

    test "a call struct predict_async/3 did not make is an :invalid_argument error", %{bin: bin} do
      m = model(bin)

      forged = %HexagonTpu.Call{ref: make_ref(), tag: make_ref(), owner: self(), graph: m}
      assert {:error, %Error{reason: :invalid_argument} = e} = HexagonTpu.await(forged)
      assert e.message =~ "did not make"
      no_graph = %HexagonTpu.Call{ref: make_ref(), tag: make_ref(), owner: self(), graph: nil}
      assert {:error, %Error{reason: :invalid_argument}} = HexagonTpu.await(no_graph, 10)
    end

    test "a Graph map made by hand without its fields is an :invalid_argument error" do
      forged = %{__struct__: HexagonTpu.Graph, ref: make_ref()}

      for f <- [
            fn -> HexagonTpu.predict(forged, add_inputs()) end,
            fn -> HexagonTpu.predict_async(forged, add_inputs()) end,
            fn -> HexagonTpu.predict_batch(forged, [[1.0, 2.0, 3.0, 4.0]]) end
          ] do
        assert {:error, %Error{reason: :invalid_argument} = e} = f.()
        assert e.message =~ "expected a %HexagonTpu.Graph{}"
      end

      assert_raise ArgumentError, ~r/expected a %HexagonTpu.Graph{}/, fn ->
        HexagonTpu.stream(forged, [])
      end
    end

    test "stream/3 checks its options before the first element", %{bin: bin} do
      m = model(bin)

      assert_raise ArgumentError, ~r/stream\/3: expected the options to be a keyword list/, fn ->
        HexagonTpu.stream(m, Stream.repeatedly(fn -> add_inputs() end), [:nope])
      end

      assert_raise ArgumentError, ~r/HexagonTpu.stream\/3: unknown option :bogus/, fn ->
        HexagonTpu.stream(m, Stream.repeatedly(fn -> add_inputs() end), bogus: 1)
      end

      assert_raise ArgumentError, ~r/stream\/3: expected :timeout/, fn ->
        HexagonTpu.stream(m, Stream.repeatedly(fn -> add_inputs() end), timeout: -5)
      end
    end

    test "a bad :shared_runtime_idle_ms is an error on every shared load, not runtimes kept forever",
         %{bin: bin} do
      for bad <- ["300000", -1, :forever] do
        Application.put_env(:hexagon_tpu, :shared_runtime_idle_ms, bad)

        try do
          assert {:error, %Error{reason: :invalid_option} = e} =
                   HexagonTpu.load_model({:binary, bin}, backend: :reference, graph: "add_f32")

          assert e.message =~ ":shared_runtime_idle_ms"
          assert e.message =~ inspect(bad)
        after
          Application.delete_env(:hexagon_tpu, :shared_runtime_idle_ms)
        end
      end

      assert {:ok, m} =
               HexagonTpu.load_model({:binary, bin}, backend: :reference, graph: "add_f32")

      HexagonTpu.close(m)
    end
  end
end
