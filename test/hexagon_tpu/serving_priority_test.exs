# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.ServingPriorityTest do
    # HexagonTpu.Serving's :priority and :timeout: its batches on the model's queue (submitted
    # calls), placed by priority among the calls waiting for a model two servings share. Stalls
    # come from the reference backend's control API (process-wide), so not async. Runs only with
    # Nx.
    use ExUnit.Case, async: false
    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    import HexagonTpu.TestModels
    alias HexagonTpu.{NIF, Runtime}

    setup do
      on_exit(fn -> stall(0) end)
    end

    defp row(x), do: Nx.tensor([[x, x + 1, x + 2, x + 3]], type: {:f, 32})

    test "a serving that loads its source gives its :priority to the load (the context's QNN priority)" do
      bin = build!(String.replace(add_f32(), "graph add_f32", "graph serving_prio_g"))

      for {prio, qnn} <- [high: 200, low: 0] do
        serving = HexagonTpu.Serving.new({:binary, bin}, priority: prio, backend: :reference)
        name = :"serving_prio_#{prio}"
        start_supervised!({Nx.Serving, serving: serving, name: name}, id: name)

        assert {:ok, %{context_priority: ^qnn}} =
                 NIF.ref_control(ref_backend_lib(), {:graph_state, "serving_prio_g"})

        [y] = Nx.Serving.batched_run(name, [row(1.0), row(2.0)])
        assert Nx.to_flat_list(y) == [3.0, 5.0, 7.0, 9.0]
        stop_supervised!(name)
      end
    end

    test "a :high serving's batch overtakes a :low serving's queued before it on a shared model" do
      model =
        HexagonTpu.load_model!({:binary, build!(add_f32())},
          runtime: Runtime.open!(backend: :reference)
        )

      for {name, prio} <- [low: :low, high: :high] do
        serving = HexagonTpu.Serving.new(model, priority: prio, batch_size: 1, batch_timeout: 0)
        start_supervised!({Nx.Serving, serving: serving, name: name}, id: name)
      end

      assert wait_quiet()
      # every execute stalls 1 s (the steps below wait on counters, not on a clock)
      stall(1_000_000)
      zero = <<0::128>>
      # the model busy with a first call: the servings' batches queue behind it
      {:ok, first} = HexagonTpu.predict_async(model, [zero, zero])
      assert wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end, 60_000)
      test = self()

      run = fn name, x ->
        spawn_link(fn ->
          [y] = Nx.Serving.batched_run(name, [row(x), row(x)])
          send(test, {:done, name, Nx.to_flat_list(y)})
        end)
      end

      run.(:low, 1.0)
      assert wait_until(fn -> HexagonTpu.stats().executes_waiting >= 1 end, 60_000)
      waiting = HexagonTpu.stats().executes_waiting
      run.(:high, 10.0)
      assert wait_until(fn -> HexagonTpu.stats().executes_waiting > waiting end, 60_000)
      assert_receive {:done, n1, y1}, 10_000
      assert_receive {:done, n2, y2}, 10_000
      stall(0)
      assert {:ok, _} = HexagonTpu.await(first)

      assert [{n1, y1}, {n2, y2}] == [
               {:high, [20.0, 22.0, 24.0, 26.0]},
               {:low, [2.0, 4.0, 6.0, 8.0]}
             ]
    end

    test "bad :timeout and :priority are refused by Serving.new/2 like predict/3's" do
      path = build_file!(add_f32())

      assert_raise HexagonTpu.Error, ~r/timeout/, fn ->
        HexagonTpu.Serving.new(path, backend: :reference, timeout: 0)
      end

      assert_raise HexagonTpu.Error, ~r/priority/, fn ->
        HexagonTpu.Serving.new(path, backend: :reference, priority: :urgent)
      end
    end
  end
end
