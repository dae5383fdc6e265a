# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.ServingBatchInputTest do
    use ExUnit.Case, async: true

    # Requests as Nx.Batch, the form Ortex.Serving's and Bumblebee's callers write, against the
    # same rows as plain tensors and against predict_batch/3. Runs only with Nx.
    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    import HexagonTpu.TestModels
    alias HexagonTpu.Error

    # one input (one: x u8 [1,4]); two of different quantizations (ab, TestModels.ab_abc/0);
    # three, the third of another shape and type (abc: y = (a + b) * c); and ba: ab's inputs in
    # the other graph order, so that a map's sorted keys (a, b) are not the graph's order (b, a).
    @graphs """
    graph one
      input x u8 [1,4] scale=0.1 zero_point=128
      output y f32 [1,4]
      op Relu x -> y
    graph ba
      input b u8 [1,4] scale=0.5 zero_point=0
      input a u8 [1,4] scale=0.1 zero_point=128
      output y f32 [1,4]
      op ElementWiseAdd b a -> y
    """

    setup_all do
      bin = build!(ab_abc() <> @graphs)
      load = &HexagonTpu.load_model!({:binary, bin}, backend: :reference, graph: &1)
      %{one: load.("one"), ab: load.("ab"), abc: load.("abc"), ba: load.("ba")}
    end

    defp name, do: :"serving_batch_input_#{System.unique_integer([:positive])}"

    defp serve(model, batch_size) do
      name = name()
      serving = HexagonTpu.Serving.new(model, batch_size: batch_size, batch_timeout: 1)
      start_supervised!({Nx.Serving, serving: serving, name: name}, id: name)
      name
    end

    # n rows per input that no other input's rows equal, each row its own values: a (scale 0.1,
    # zero point 128: -12.8..12.7), b (scale 0.5: 0..127.5), c ([1,1] f32)
    defp rows_a(n), do: for(i <- 1..n, do: t([i * 0.1 - 1, -i * 0.2, 0.5, i * 0.3 - 3]))
    defp rows_b(n), do: for(i <- 1..n, do: t([i * 2.0, 1.5, 40 - i, i * 0.5]))
    defp rows_c(n), do: for(i <- 1..n, do: t([i * 0.25 - 2]))

    defp t(rows), do: Nx.tensor(rows, type: {:f, 32})
    defp flat(outputs), do: Enum.map(outputs, &Nx.to_flat_list/1)

    defp direct(model, inputs) do
      {:ok, outputs} = HexagonTpu.predict_batch(model, inputs, output: :nx)
      flat(outputs)
    end

    test "one input: Nx.Batch.stack and Nx.Batch.concatenate", %{one: one} do
      serving = HexagonTpu.Serving.new(one, batch_size: 8)
      rows = [t([1, -2, 3, 4]), t([0.5, 6, -7, 8])]
      want = direct(one, [Nx.stack(rows)])

      assert flat(Nx.Serving.run(serving, Nx.Batch.stack(rows))) == want

      assert flat(
               Nx.Serving.run(serving, Nx.Batch.concatenate(Enum.map(rows, &Nx.new_axis(&1, 0))))
             ) == want

      # padding is not the caller's rows
      padded = rows |> Nx.Batch.stack() |> Nx.Batch.pad(3)
      assert flat(Nx.Serving.run(serving, padded)) == want
    end

    test "several inputs: a batch of tuples, or a batch per input", %{ab: ab} do
      serving = HexagonTpu.Serving.new(ab, batch_size: 8)
      a = [t([1, 2, -3, 0.5]), t([0, 0.1, 0.2, 0.3])]
      b = [t([10, 20, 30, 0.5]), t([1, 2, 3, 4])]
      want = direct(ab, [Nx.stack(a), Nx.stack(b)])

      tuples = Nx.Batch.stack(Enum.zip(a, b))
      assert flat(Nx.Serving.run(serving, tuples)) == want
      assert flat(Nx.Serving.run(serving, [Nx.Batch.stack(a), Nx.Batch.stack(b)])) == want
      # a batch for one input, a tensor for the other
      assert flat(Nx.Serving.run(serving, [Nx.Batch.stack(a), Nx.stack(b)])) == want

      name = :"serving_batch_input_#{System.unique_integer([:positive])}"
      start_supervised!({Nx.Serving, serving: serving, name: name})
      assert flat(Nx.Serving.batched_run(name, tuples)) == want
      assert {:ok, got} = HexagonTpu.Serving.batched_run(name, tuples)
      assert flat(got) == want
    end

    test "bad batches are clear errors", %{ab: ab} do
      serving = HexagonTpu.Serving.new(ab, batch_size: 8)
      a = t([1, 2, 3, 4])

      assert_raise Error, ~r/empty Nx.Batch/, fn -> Nx.Serving.run(serving, Nx.Batch.new()) end

      assert_raise Error, ~r/must hold one tensor per entry.*got 2/, fn ->
        Nx.Serving.run(serving, [Nx.Batch.stack([{a, a}]), Nx.Batch.stack([a])])
      end

      # a batch of one tensor for a graph of two inputs: the count is wrong, as for a tensor
      assert_raise Error, ~r/graph .ab. expects 2 input\(s\) \(a, b\), got 1/, fn ->
        Nx.Serving.run(serving, Nx.Batch.stack([a]))
      end
    end

    # A request of more rows than batch_size, as Nx.Batch, through batched_run/3 (which splits
    # it): the pieces straddle the batch's entries and its padding; checked against
    # predict_batch/3 on graphs whose inputs cannot be swapped unnoticed.
    test "batched_run/3 splits an Nx.Batch request larger than batch_size", ctx do
      %{ab: ab, abc: abc} = ctx
      a = rows_a(20)
      b = rows_b(20)
      c = rows_c(20)
      want_ab = direct(ab, [Nx.stack(a), Nx.stack(b)])
      want_abc = direct(abc, [Nx.stack(a), Nx.stack(b), Nx.stack(c)])
      ab_name = serve(ab, 8)
      abc_name = serve(abc, 8)

      run = fn name, request ->
        assert {:ok, got} = HexagonTpu.Serving.batched_run(name, request)
        flat(got)
      end

      # a whole batch of tuples; padded; entries of 3, 7 and 10 rows across pieces of 8
      assert run.(ab_name, Nx.Batch.stack(Enum.zip(a, b))) == want_ab
      assert run.(ab_name, Nx.Batch.stack(Enum.zip(a, b)) |> Nx.Batch.pad(5)) == want_ab

      entries =
        for {start, n} <- [{0, 3}, {3, 7}, {10, 10}],
            do: {Nx.stack(Enum.slice(a, start, n)), Nx.stack(Enum.slice(b, start, n))}

      assert run.(ab_name, Nx.Batch.concatenate(entries)) == want_ab
      assert run.(abc_name, Nx.Batch.stack(Enum.zip([a, b, c]))) == want_abc

      # a list of batches (one per input), and batches beside tensors
      assert run.(ab_name, [Nx.Batch.stack(a), Nx.Batch.stack(b)]) == want_ab
      assert run.(ab_name, [Nx.Batch.stack(a), Nx.stack(b)]) == want_ab
      assert run.(abc_name, [Nx.stack(a), Nx.Batch.stack(b), Nx.Batch.stack(c)]) == want_abc

      # the same request as tensors, and a graph of one input given a batch alone
      assert run.(ab_name, [Nx.stack(a), Nx.stack(b)]) == want_ab
      one_name = serve(ctx.one, 8)
      assert run.(one_name, Nx.Batch.stack(a)) == direct(ctx.one, [Nx.stack(a)])
    end

    # Bumblebee's and Ortex's callers key an entry's inputs by name: matched to the graph's
    # input names, never by the keys' sorted order (ba's inputs are b, then a).
    test "a batch of maps: each input by its name", %{ba: ba, ab: ab} do
      a = rows_a(3)
      b = rows_b(3)
      want = direct(ba, [Nx.stack(b), Nx.stack(a)])
      serving = HexagonTpu.Serving.new(ba, batch_size: 8)

      maps = for {x, y} <- Enum.zip(a, b), do: %{"a" => x, "b" => y}
      assert flat(Nx.Serving.run(serving, Nx.Batch.stack(maps))) == want

      atoms = for {x, y} <- Enum.zip(a, b), do: %{a: x, b: y}
      assert flat(Nx.Serving.run(serving, Nx.Batch.stack(atoms))) == want

      # the same maps on ab (inputs a, b): each by its name again
      assert flat(Nx.Serving.run(HexagonTpu.Serving.new(ab), Nx.Batch.stack(maps))) ==
               direct(ab, [Nx.stack(a), Nx.stack(b)])

      # split by batched_run/3: 20 rows through batches of 8
      a20 = rows_a(20)
      b20 = rows_b(20)
      name = serve(ba, 8)
      maps20 = for {x, y} <- Enum.zip(a20, b20), do: %{"b" => y, "a" => x}
      assert {:ok, got} = HexagonTpu.Serving.batched_run(name, Nx.Batch.stack(maps20))
      assert flat(got) == direct(ba, [Nx.stack(b20), Nx.stack(a20)])
    end

    test "a batch of maps: missing, unknown and doubled names are clear errors", %{ba: ba} do
      serving = HexagonTpu.Serving.new(ba, batch_size: 8)
      x = t([1, 2, 3, 4])

      assert_raise Error, ~r/graph 'ba'.*no entry for input\(s\) "a".*inputs are b, a/, fn ->
        Nx.Serving.run(serving, Nx.Batch.stack([%{"b" => x}]))
      end

      assert_raise Error, ~r/graph 'ba'.*no input\(s\) named "c".*inputs are b, a/, fn ->
        Nx.Serving.run(serving, Nx.Batch.stack([%{"a" => x, "b" => x, "c" => x}]))
      end

      assert_raise Error, ~r/graph 'ba'.*input "a" given twice/, fn ->
        Nx.Serving.run(serving, Nx.Batch.stack([%{"a" => x, :a => x, "b" => x}]))
      end

      assert_raise Error,
                   ~r/graph 'ba'.*keys must be input names \(strings or atoms\), got 1/,
                   fn ->
                     Nx.Serving.run(serving, Nx.Batch.stack([%{1 => x, "a" => x}]))
                   end

      # a map names inputs: it is the whole request, not one position of a list
      assert_raise Error, ~r/must hold one tensor per entry/, fn ->
        Nx.Serving.run(serving, [Nx.Batch.stack([%{"b" => x}]), Nx.Batch.stack([x])])
      end

      # nested containers are not inputs
      assert_raise Error, ~r/entries must be a tensor, a tuple of tensors .* or a map/, fn ->
        Nx.Serving.run(serving, Nx.Batch.stack([{x, {x, x}}]))
      end
    end
  end
end
