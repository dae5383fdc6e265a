defmodule HexagonTpu.SharedRuntimeTest do
  # The lifetime of the shared runtimes (Runtime.shared/1, load_model/2's): each option set
  # keeps one while models use it, and one nothing has used for the idle period is closed
  # (Runtime.close_idle_shared/1). Not async: it closes every idle shared runtime and sets the
  # application's :shared_runtime_idle_ms, which test_helper.exs holds at :infinity for the
  # rest of the suite.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, KeyLock, Runtime}

  setup_all do
    %{bin: build!(add_f32())}
  end

  setup do
    # Nothing from earlier tests: their models collected and closed first (settle/0), so that
    # every runtime they leave is idle now and closed here, not in the middle of this test.
    settle()
    {:ok, _} = Runtime.close_idle_shared(idle_ms: 0)
    %{base: settle()}
  end

  defp shared?(opts) do
    Enum.any?(KeyLock.keys({Runtime, :shared, :_}), fn {Runtime, :shared, key} ->
      Enum.all?(opts, fn {k, v} -> Map.get(key, k) == v end)
    end)
  end

  # An option set of its own per `i` (a start-up back-off nobody else uses).
  defp opts(i), do: [backend: :reference, startup_retry_delay_ms: 70_000 + i]

  test "N loads with N option sets: once the models are gone, so are their runtimes",
       %{bin: bin, base: base} do
    n = 40

    # half are closed, half dropped (their process ends and its heap goes)
    closed = for i <- 1..div(n, 2), do: HexagonTpu.load_model!({:binary, bin}, opts(i))
    test = self()

    dropper =
      spawn(fn ->
        models = for i <- (div(n, 2) + 1)..n, do: HexagonTpu.load_model!({:binary, bin}, opts(i))
        send(test, {:loaded, length(models)})

        receive do
          # the models stay referenced until then
          :drop -> length(models)
        end
      end)

    assert_receive {:loaded, 20}
    assert settle().live_runtimes == base.live_runtimes + n

    # in use: nothing is closed
    assert {:ok, 0} = Runtime.close_idle_shared(idle_ms: 0)
    assert length(KeyLock.keys({Runtime, :shared, :_})) >= n

    Enum.each(closed, &HexagonTpu.close/1)
    ref = Process.monitor(dropper)
    send(dropper, :drop)
    assert_receive {:DOWN, ^ref, :process, ^dropper, :normal}
    # the dropped graphs' destructors run at their collection
    assert wait_for_live(%{live_graphs: base.live_graphs}) == %{live_graphs: base.live_graphs}

    assert {:ok, ^n} = Runtime.close_idle_shared(idle_ms: 0)
    assert wait_for_live(base) == base
    assert KeyLock.keys({Runtime, :shared, :_}) == []

    # and the next load opens a fresh one
    model = HexagonTpu.load_model!({:binary, bin}, opts(1))
    assert {:ok, _} = add(model)
    HexagonTpu.close(model)
  end

  test "kept while a model is open or within the idle period; shared/1 counts as a use",
       %{bin: bin, base: base} do
    model = HexagonTpu.load_model!({:binary, bin}, opts(100))
    {:ok, rt} = Runtime.shared(opts(100))
    assert {:ok, 0} = Runtime.close_idle_shared(idle_ms: 0)
    assert {:ok, _} = add(model)

    HexagonTpu.close(model)
    # idle now, but not for a minute yet
    assert {:ok, 0} = Runtime.close_idle_shared(idle_ms: 60_000)
    assert {:ok, ^rt} = Runtime.shared(opts(100))
    assert {:ok, 1} = Runtime.close_idle_shared(idle_ms: 0)
    assert wait_for_live(base) == base

    # a runtime handed out by shared/1 and not used yet has the idle period to get a model
    {:ok, rt2} = Runtime.shared(opts(101))
    assert {:ok, 0} = Runtime.close_idle_shared(idle_ms: 60_000)
    assert {:ok, ctx} = Context.load(rt2, {:binary, bin})
    Context.close(ctx)

    # :infinity closes none
    assert {:ok, 0} = Runtime.close_idle_shared(idle_ms: :infinity)
    assert {:ok, 1} = Runtime.close_idle_shared(idle_ms: 0)
  end

  test "a load holding the shared runtime keeps it: it never gets a closed runtime",
       %{bin: bin, base: base} do
    result =
      Runtime.with_shared(opts(200), fn rt ->
        # the retirement runs in the middle of the load (nothing is open on the runtime yet)
        assert {:ok, 0} = Runtime.close_idle_shared(idle_ms: 0)
        assert {:ok, ctx} = Context.load(rt, {:binary, bin})
        Context.close(ctx)
        {:ok, rt}
      end)

    assert {:ok, rt} = result
    # it was put back: still the shared one
    assert {:ok, ^rt} = Runtime.shared(opts(200))

    # the same, racing: loads and closes on one option set while retirements run
    retirer =
      Task.async(fn ->
        Enum.reduce(1..200, 0, fn _, acc ->
          {:ok, k} = Runtime.close_idle_shared(idle_ms: 0)
          acc + k
        end)
      end)

    results =
      1..4
      |> Enum.map(fn _ ->
        Task.async(fn ->
          for _ <- 1..25 do
            with {:ok, model} <- HexagonTpu.load_model({:binary, bin}, opts(201)) do
              r = add(model)
              HexagonTpu.close(model)
              r
            end
          end
        end)
      end)
      |> Task.await_many(60_000)
      |> List.flatten()

    Task.await(retirer, 60_000)

    assert Enum.all?(results, &match?({:ok, [_]}, &1)),
           inspect(Enum.reject(results, &match?({:ok, _}, &1)))

    {:ok, _} = Runtime.close_idle_shared(idle_ms: 0)
    assert wait_for_live(base) == base
  end

  test "a process killed while it holds a shared runtime does not keep it forever",
       %{base: base} do
    test = self()

    holder =
      spawn(fn ->
        Runtime.with_shared(opts(300), fn rt ->
          send(test, {:holding, rt})
          Process.sleep(:infinity)
        end)
      end)

    assert_receive {:holding, _rt}
    # held: not closed (other runtimes, if any became idle since the setup, may be)
    assert {:ok, _} = Runtime.close_idle_shared(idle_ms: 0)
    assert shared?(opts(300))
    # the kill is asynchronous: the holder is gone once its monitor says so
    ref = Process.monitor(holder)
    Process.exit(holder, :kill)
    assert_receive {:DOWN, ^ref, :process, ^holder, :killed}
    assert {:ok, closed} = Runtime.close_idle_shared(idle_ms: 0)
    assert closed >= 1
    refute shared?(opts(300))
    assert wait_for_live(base) == base
  end

  test "the server retires idle runtimes by itself (:shared_runtime_idle_ms)",
       %{bin: bin, base: base} do
    Application.put_env(:hexagon_tpu, :shared_runtime_idle_ms, 0)

    try do
      # a fresh option set: its runtime is stored now, which schedules a sweep (1 s: the least)
      model = HexagonTpu.load_model!({:binary, bin}, opts(400))
      HexagonTpu.close(model)
      assert wait_for_live(base, 30_000) == base
      assert KeyLock.keys({Runtime, :shared, :_}) == []
    after
      Application.put_env(:hexagon_tpu, :shared_runtime_idle_ms, :infinity)
    end
  end

  test "bad idle periods are :invalid_option errors" do
    assert {:error, %HexagonTpu.Error{reason: :invalid_option, message: msg}} =
             Runtime.close_idle_shared(idle_ms: -1)

    assert msg =~ "expected :idle_ms to be a non-negative integer (milliseconds) or :infinity"

    Application.put_env(:hexagon_tpu, :shared_runtime_idle_ms, :soon)

    try do
      assert {:error, %HexagonTpu.Error{reason: :invalid_option, message: msg}} =
               Runtime.close_idle_shared()

      assert msg =~ ":shared_runtime_idle_ms to be a non-negative integer"
      assert msg =~ "got :soon"
      assert Runtime.sweep_interval_ms() == nil
    after
      Application.put_env(:hexagon_tpu, :shared_runtime_idle_ms, :infinity)
    end
  end
end
