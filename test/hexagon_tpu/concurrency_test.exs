defmodule HexagonTpu.ConcurrencyTest do
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Graph, Runtime}

  setup_all do
    rt = Runtime.open!(backend: :reference)
    ctx = Context.load!(rt, {:binary, build!(mixed())})
    ctx2 = Context.load!(rt, {:binary, build!(two_graphs())})

    %{
      fc: Graph.open!(ctx, graph: "fc_u8"),
      u16: Graph.open!(ctx, graph: "add_u16"),
      add: Graph.open!(ctx2, graph: "add_f32"),
      scale: Graph.open!(ctx2, graph: "scale_u8")
    }
  end

  # Deterministic inputs per (graph, i) so a concurrent run can be compared with a serial one.
  defp inputs(:fc, i), do: [f32([rem(i, 7) * 0.5, rem(i, 5) * 1.0, rem(i, 3) - 1.0])]
  defp inputs(:u16, i), do: [f32([i / 100, -i / 200, 1.0, 0.5]), f32([0.25, i / 300, -1.0, 2.0])]
  defp inputs(:add, i), do: [f32([i, i + 1, i + 2, i + 3]), f32([1, 2, 3, 4])]
  defp inputs(:scale, i), do: [f32([rem(i, 10) / 10, 1.0, 2.0, rem(i, 4) * 1.0])]

  defp run(graphs, name, i) do
    {:ok, outputs} = Graph.execute(graphs[name], inputs(name, i), output: :binary)
    outputs
  end

  test "many processes on one model give the serial results", graphs do
    serial = for i <- 1..200, do: run(graphs, :fc, i)

    concurrent =
      1..200
      |> Task.async_stream(&run(graphs, :fc, &1), max_concurrency: 50, ordered: true)
      |> Enum.map(fn {:ok, out} -> out end)

    assert concurrent == serial
  end

  test "many processes on several models at once give the serial results", graphs do
    jobs = for name <- [:fc, :u16, :add, :scale], i <- 1..100, do: {name, i}
    serial = Map.new(jobs, fn {name, i} -> {{name, i}, run(graphs, name, i)} end)

    concurrent =
      jobs
      |> Enum.shuffle()
      |> Task.async_stream(fn {name, i} -> {{name, i}, run(graphs, name, i)} end,
        max_concurrency: 64
      )
      |> Map.new(fn {:ok, kv} -> kv end)

    assert concurrent == serial
  end

  test "loading and closing while other processes execute", graphs do
    bin = build!(add_f32())

    loaders =
      Task.async(fn ->
        for _ <- 1..100 do
          m = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
          {:ok, [_]} = HexagonTpu.predict(m, inputs(:add, 1), output: :binary)
          HexagonTpu.close(m)
        end

        :done
      end)

    results =
      1..400
      |> Task.async_stream(fn i -> run(graphs, :scale, i) == run(graphs, :scale, i) end,
        max_concurrency: 16
      )
      |> Enum.all?(&match?({:ok, true}, &1))

    assert results
    assert Task.await(loaders, 30_000) == :done
  end
end
