defmodule HexagonTpu.BatchAsyncTest do
  # predict_batch/3 on the graph's queue (submitted calls, answers as messages): one call with
  # a batch multiple where the graph takes one, else one call per chunk with several in flight;
  # :timeout and :priority as for predict/3. Stalls come from the reference backend's control
  # API (process-wide), so not async. The oracle is predict/3 row by row; order and counts are
  # asserted, durations only against generous bounds.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Runtime}

  # y = a * b + a: the two inputs are not interchangeable. Batch 1, so a batch of N rows is N
  # chunks; "batch_multiple=no" makes the graph refuse multiples (one call per chunk).
  @model """
  graph fma GRAPHOPTS
    input a f32 [1,4]
    input b f32 [1,4]
    native t f32 [1,4]
    output y f32 [1,4]
    op ElementWiseMultiply a b -> t
    op ElementWiseAdd t a -> y
  """

  setup do
    on_exit(&reset_ref_controls/0)
  end

  defp model(graph_opts, load_opts \\ []) do
    bin = build!(String.replace(@model, "GRAPHOPTS", graph_opts))

    HexagonTpu.load_model!(
      {:binary, bin},
      [runtime: Runtime.open!(backend: :reference)] ++ load_opts
    )
  end

  # n rows of each input, every row different, a and b different
  defp rows(n) do
    a = for i <- 1..n, j <- 1..4, into: <<>>, do: <<i * 1.0 + j / 8::float-32-native>>
    b = for i <- 1..n, j <- 1..4, into: <<>>, do: <<j * 1.0 - i / 4::float-32-native>>
    {a, b}
  end

  defp per_row(m, a, b) do
    for {<<ra::binary-16>>, <<rb::binary-16>>} <-
          Enum.zip(for(<<r::binary-16 <- a>>, do: r), for(<<r::binary-16 <- b>>, do: r)),
        into: <<>> do
      {:ok, [y]} = HexagonTpu.predict(m, [ra, rb], output: :binary)
      y
    end
  end

  # The VM's live calls, after every process has let go of what it no longer references: a call
  # resource an earlier test's process still holds as garbage would otherwise be counted in the
  # baseline and freed during this test.
  defp live_now do
    for p <- Process.list(), do: :erlang.garbage_collect(p)
    Map.take(HexagonTpu.stats(), [:live_calls, :nif_live_calls])
  end

  test "a batch as one call with a batch multiple, or one call per chunk: per-row results, no dirty IO" do
    {a, b} = rows(10)

    for {opts, executes} <- [{"", 1}, {"batch_multiple=no", 10}] do
      m = model(opts)
      want = per_row(m, a, b)
      # the rows and the inputs are not interchangeable
      assert want != per_row(m, b, a)
      assert length(Enum.uniq(for <<r::binary-16 <- want>>, do: r)) == 10

      before = HexagonTpu.stats()

      assert {:ok, [y], stats} = HexagonTpu.predict_batch(m, [a, b], output: :binary, stats: true)

      assert y == want
      assert stats.scheduler == :async
      assert stats.chunks == 10
      # the refusing graph: its first batch finds out (one try, then chunks in one call)
      assert {:ok, [^want], %{executes: ^executes}} =
               HexagonTpu.predict_batch(m, [a, b], output: :binary, stats: true)

      after_ = HexagonTpu.stats()
      assert after_.executes_dirty_io == before.executes_dirty_io
      assert after_.calls_submitted - before.calls_submitted >= 2
    end
  end

  test "an execute error in the middle of a chunked batch names its chunk; the rest are cancelled" do
    # a baseline once an earlier test's calls have ended and been collected
    settle()
    base = live_now()
    rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", "graphExecute:6:1002"}])
    bin = build!(String.replace(@model, "GRAPHOPTS", "batch_multiple=no"))
    m = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
    {a, b} = rows(8)
    # a first batch of 2 rows learns that the graph refuses multiples: graphExecutes 1 (the
    # refused multiple) to 3; the next batch goes chunk by chunk, up to 4 calls in flight: its
    # chunk 2 is graphExecute 6
    assert {:ok, _} = HexagonTpu.predict_batch(m, [binary_part(a, 0, 32), binary_part(b, 0, 32)])
    before = HexagonTpu.stats()
    assert {:error, %Error{} = e} = HexagonTpu.predict_batch(m, [a, b], output: :binary)
    assert e.qnn_code == 1002
    assert e.message =~ "chunk 2 of 8: rows 2..2 of 8"
    # on the queue: at least the first 3 chunks submitted, no dirty IO execute
    after_ = HexagonTpu.stats()
    assert after_.calls_submitted - before.calls_submitted >= 3
    assert after_.executes_dirty_io == before.executes_dirty_io
    refute_received {:hexagon_tpu, _, _}
    # the model is usable after it
    assert {:ok, [y]} = HexagonTpu.predict_batch(m, [a, b], output: :binary)
    assert y == per_row(m, a, b)
    HexagonTpu.close(m)
    assert wait_until(fn -> live_now() == base end)
  end

  test "a stalled batch with timeout: 200 returns :timeout for the whole batch; the model stays usable" do
    m = model("batch_multiple=no")
    {a, b} = rows(4)
    want = per_row(m, a, b)
    # the graph learns that it refuses multiples: later batches go chunk by chunk
    assert {:ok, [^want]} = HexagonTpu.predict_batch(m, [a, b], output: :binary)
    stall(1_000_000)
    t0 = System.monotonic_time(:millisecond)

    assert {:error, %Error{reason: :timeout} = e} =
             HexagonTpu.predict_batch(m, [a, b], timeout: 200)

    # the old code ran the 4 chunks to their end: 4 s
    assert System.monotonic_time(:millisecond) - t0 < 2_500
    assert e.message =~ "fma"
    assert e.message =~ "chunk 0 of 4"
    stall(0)
    assert {:ok, [^want]} = HexagonTpu.predict_batch(m, [a, b], output: :binary)

    assert {:error, %Error{reason: :invalid_option}} =
             HexagonTpu.predict_batch(m, [a, b], timeout: 0)

    assert {:error, %Error{reason: :invalid_option}} =
             HexagonTpu.predict_batch(m, [a, b], priority: :urgent)
  end

  test "a :high batch overtakes a :low one queued before it on a shared graph" do
    m = model("batch_multiple=no")
    {a, b} = rows(4)
    test = self()
    # the graph busy with a first call, stalled until the test ends it (a cancel aborts its
    # execute), so both batches queue behind it whatever the machine's speed: each step
    # waits on a counter, never a clock
    assert wait_quiet()
    settle()
    base = live_now()
    stall(60_000_000)
    {:ok, first} = HexagonTpu.predict_async(m, [binary_part(a, 0, 16), binary_part(b, 0, 16)])
    assert wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end, 60_000)

    run = fn name, prio ->
      spawn_link(fn ->
        {:ok, _, stats} = HexagonTpu.predict_batch(m, [a, b], priority: prio, stats: true)
        send(test, {:done, name, stats})
      end)
    end

    run.(:low, :low)
    # the low batch's chunks are queued before the high one starts
    assert wait_until(fn -> HexagonTpu.stats().executes_waiting >= 1 end, 60_000)
    waiting = HexagonTpu.stats().executes_waiting
    run.(:high, :high)
    assert wait_until(fn -> HexagonTpu.stats().executes_waiting > waiting end, 60_000)
    # the two behind it have not reached graphExecute: they run without the stall
    stall(0)
    :ok = HexagonTpu.Call.cancel(first)
    # the order the graph ran them (the two callers' messages may arrive in either order)
    assert_receive {:done, :high, high}, 60_000
    assert_receive {:done, :low, low}, 60_000
    assert high.execute_start_ns < low.execute_start_ns
    # the cancelled call's execute has ended and its call is freed: nothing left to the next test
    assert wait_until(fn -> live_now() == base end, 60_000)
  end
end
