# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.ServingBatchStackTest do
    use ExUnit.Case, async: true

    # HexagonTpu.Serving reads an Nx.Batch's requests one by one through Nx.Batch's private
    # layout (HexagonTpu.Serving.BatchStack). Checked here against Nx's public traversal, on
    # tensors that cannot be confused: if an Nx release changes the layout, these fail, and the
    # serving falls back to the traversal.
    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    alias HexagonTpu.Serving.BatchStack

    # request k: three tensors of different shapes and values, `rows` rows each
    defp request(k, rows) do
      {Nx.iota({rows, 2}, type: {:f, 32}) |> Nx.add(100 * k),
       Nx.iota({rows, 3}, type: {:u, 8}) |> Nx.add(10 * k), Nx.iota({rows}, type: {:s, 64})}
    end

    defp flat(tensors), do: Enum.map(tensors, &Nx.to_flat_list/1)

    test "this Nx's layout is one the serving can read" do
      assert BatchStack.layout() in [:reversed, :in_order],
             "Nx.Batch's private layout changed (#{inspect(BatchStack.probe())}): " <>
               "HexagonTpu.Serving.BatchStack must learn it"
    end

    test "requests/3 gives each request's tensors in order, as the traversal joins them" do
      layout = BatchStack.layout()
      entries = [request(1, 2), request(2, 1), request(3, 3)]
      batch = Enum.reduce(entries, Nx.Batch.new(), &Nx.Batch.concatenate(&2, [&1]))

      assert {:ok, requests} = BatchStack.requests(batch, 3, layout)
      assert Enum.map(requests, &elem(&1, 1)) == [2, 1, 3]

      for {{tensors, _rows}, entry} <- Enum.zip(requests, entries) do
        assert flat(tensors) == flat(Tuple.to_list(entry))
      end

      joined = for i <- 0..2, do: Nx.concatenate(Enum.map(requests, &Enum.at(elem(&1, 0), i)))
      assert flat(joined) == flat(BatchStack.traverse(batch))
    end

    test "a batch Nx.Serving split: each piece's rows, in order" do
      layout = BatchStack.layout()

      batch =
        Enum.reduce(
          [request(1, 3), request(2, 3)],
          Nx.Batch.new(),
          &Nx.Batch.concatenate(&2, [&1])
        )

      {first, rest} = Nx.Batch.split(batch, 4)

      for piece <- [first, rest] do
        assert {:ok, requests} = BatchStack.requests(piece, 3, layout)
        joined = for i <- 0..2, do: Nx.concatenate(Enum.map(requests, &Enum.at(elem(&1, 0), i)))
        assert flat(joined) == flat(BatchStack.traverse(piece))
      end
    end

    test "what it cannot read is :error" do
      layout = BatchStack.layout()
      batch = Nx.Batch.concatenate([request(1, 2)])
      # another tensor count, padding, an unknown layout
      assert BatchStack.requests(batch, 2, layout) == :error
      assert BatchStack.requests(Nx.Batch.pad(batch, 1), 3, layout) == :error
      assert BatchStack.requests(batch, 3, :unknown) == :error
    end
  end
end
