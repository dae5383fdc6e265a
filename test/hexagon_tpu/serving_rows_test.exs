# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.ServingRowsTest do
    use ExUnit.Case, async: true

    # What a served request gets back, checked against HexagonTpu.predict_batch/3 (the direct
    # path) on graphs whose inputs cannot be swapped unnoticed (other quantizations, other
    # shapes, a product of a sum), and when Nx.Serving splits a request over two batches: rows in
    # order, complete, with the request's own errors. Runs only with Nx.
    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    import HexagonTpu.TestModels
    alias HexagonTpu.{Error, Runtime}

    # ab and abc (TestModels.ab_abc/0): inputs of other quantizations, shapes and types.
    setup_all do
      %{bin: build!(ab_abc())}
    end

    defp load!(bin, graph, opts \\ []),
      do: HexagonTpu.load_model!({:binary, bin}, [backend: :reference, graph: graph] ++ opts)

    defp name, do: :"serving_rows_#{System.unique_integer([:positive])}"

    defp t(rows), do: Nx.tensor(rows, type: {:f, 32})

    defp direct(model, inputs) do
      {:ok, outputs} = HexagonTpu.predict_batch(model, inputs, output: :nx)
      Enum.map(outputs, &Nx.to_flat_list/1)
    end

    defp flat({:ok, outputs}), do: {:ok, Enum.map(outputs, &Nx.to_flat_list/1)}
    defp flat(outputs) when is_list(outputs), do: Enum.map(outputs, &Nx.to_flat_list/1)

    test "inputs reach the graph in order: other quantizations, shapes and a non-commutative graph",
         %{bin: bin} do
      ab = load!(bin, "ab")
      abc = load!(bin, "abc")
      a = t([[1, 2, -3, 0.5], [0, 0.1, 0.2, 0.3]])
      b = t([[10, 20, 30, 0.5], [1, 2, 3, 4]])
      c = t([[2], [-1]])

      # the issue's numbers: a and b swapped gave [11, 14.7, 12.7, 1]
      assert_close(hd(direct(ab, [a[0..0], b[0..0]])), [11.0, 22.0, 27.0, 1.0])

      for {model, inputs} <- [{ab, [a, b]}, {abc, [a, b, c]}] do
        want = direct(model, inputs)
        serving = HexagonTpu.Serving.new(model, batch_size: 4, batch_timeout: 1)
        assert flat(Nx.Serving.run(serving, inputs)) == want

        name = name()
        start_supervised!({Nx.Serving, serving: serving, name: name}, id: name)
        assert flat(Nx.Serving.batched_run(name, inputs)) == want
        assert flat(HexagonTpu.Serving.batched_run(name, inputs)) == {:ok, want}
        # split by batched_run/3 (5 rows > batch_size 4): still in order
        big = Enum.map(inputs, fn x -> Nx.concatenate([x, x, x[0..0]]) end)
        assert flat(HexagonTpu.Serving.batched_run(name, big)) == {:ok, direct(model, big)}
      end
    end

    # Nx.Serving 0.7 splits a request that does not fit in what is left of the batch being
    # filled. With batch_size 4: A (3 rows) then B (3 rows) make the batches A0 A1 A2 B0 and
    # B1 B2. The serving process is held while both requests reach it, so it takes them in this
    # order, whatever the machine's load.
    defp a_then_b(name, request_a, request_b) do
      [result_a, result_b] =
        HexagonTpu.ServingOrder.in_order(name, [
          fn -> HexagonTpu.Serving.batched_run(name, request_a) end,
          fn -> HexagonTpu.Serving.batched_run(name, request_b) end
        ])

      {result_a, result_b}
    end

    defp serve(models, opts) do
      name = name()

      serving =
        HexagonTpu.Serving.new(models, Keyword.merge([batch_size: 4, batch_timeout: 0], opts))

      start_supervised!({Nx.Serving, serving: serving, name: name}, id: name)
      name
    end

    test "a request split over two batches: a failed first batch fails it too", %{bin: bin} do
      # the first execute of this runtime fails (QNN 1002); every later one works
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", "graphExecute:1:1002"}])
      ab = HexagonTpu.load_model!({:binary, bin}, runtime: rt, graph: "ab")
      name = serve(ab, [])
      a = t([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
      b = t([[0, 1, 0, 1], [1, 0, 1, 0], [2, 2, 2, 2]])

      {result_a, result_b} = a_then_b(name, [a, b], [b, a])
      assert {:error, %Error{reason: :qnn_error, qnn_code: 1002}} = result_a
      # B's row 0 ran in A's batch: B fails with that error, not {:ok, ...} with a row of zeros
      assert {:error, %Error{reason: :qnn_error, qnn_code: 1002}} = result_b
      # the serving goes on
      assert flat(HexagonTpu.Serving.batched_run(name, [b, a])) == {:ok, direct(ab, [b, a])}
    end

    test "a request split over two batches: a NaN in its first row is its error", %{bin: bin} do
      ab = load!(bin, "ab")
      name = serve(ab, [])
      a = t([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
      b = t([[0, 1, 0, 1], [1, 0, 1, 0], [2, 2, 2, 2]])
      nan_b = Nx.put_slice(b, [0, 2], Nx.tensor([[:nan]], type: {:f, 32}))

      {result_a, result_b} = a_then_b(name, [a, b], [nan_b, a])
      assert flat(result_a) == {:ok, direct(ab, [a, b])}
      assert {:error, %Error{reason: :nan}} = result_b

      # and a NaN in the part that runs in the next batch
      nan_late = Nx.put_slice(b, [2, 0], Nx.tensor([[:nan]], type: {:f, 32}))
      {result_a, result_b} = a_then_b(name, [a, b], [nan_late, a])
      assert flat(result_a) == {:ok, direct(ab, [a, b])}
      assert {:error, %Error{reason: :nan}} = result_b
    end

    test "a request whose pieces fail differently gets the error of its first failed row",
         %{bin: bin} do
      # batch 1 (A and B's row 0) fails its first execute (QNN 1002); batch 2 (B's rows 1-2)
      # holds a NaN
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", "graphExecute:1:1002"}])
      ab = HexagonTpu.load_model!({:binary, bin}, runtime: rt, graph: "ab")
      name = serve(ab, [])
      a = t([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
      nan_late = Nx.put_slice(a, [2, 0], Nx.tensor([[:nan]], type: {:f, 32}))

      {result_a, result_b} = a_then_b(name, [a, a], [nan_late, a])
      assert {:error, %Error{reason: :qnn_error, qnn_code: 1002}} = result_a
      assert {:error, %Error{reason: :qnn_error, qnn_code: 1002}} = result_b
    end

    test "axis names of one caller do not fail the others' batch", %{bin: bin} do
      ab = load!(bin, "ab")
      name = serve(ab, [])
      x = t([[1, 2, 3, 4], [5, 6, 7, 8]])
      named_x = Nx.rename(x, [:batch, :x])
      named_y = Nx.rename(x, [nil, :y])

      {result_a, result_b} = a_then_b(name, [named_x, x], [named_y, x])
      assert flat(result_a) == {:ok, direct(ab, [x, x])}
      assert flat(result_b) == {:ok, direct(ab, [x, x])}
    end

    test "a graph quantized per axis along its batch axis is not served", %{bin: _bin} do
      # per_axis_in: x u8 [2,3] with a scale per row: a row's result would depend on its place
      model =
        HexagonTpu.load_model!({:binary, build!(mixed())},
          backend: :reference,
          graph: "per_axis_in"
        )

      assert_raise Error, ~r/'x' is quantized per axis along axis 0, its batch axis/, fn ->
        HexagonTpu.Serving.new(model)
      end

      assert {:error, %Error{reason: :invalid_argument, message: msg}} =
               HexagonTpu.predict_batch(model, [Nx.iota({4, 3}, type: {:f, 32})])

      assert msg =~ "cannot be batched"
    end

    test "the serving keeps a bounded number of errors, dropping the oldest" do
      alias HexagonTpu.Serving.RowTags
      table = RowTags.new_table()
      kept = RowTags.kept()

      ids =
        for i <- 1..(kept + 3) do
          {id, %{}} = RowTags.put_error(table, %{}, Error.new(:nan, "error #{i}"))
          id
        end

      assert ids == Enum.to_list(1..(kept + 3))
      # the counter and the last `kept` errors
      assert :ets.info(table, :size) == kept + 1
      assert :ets.lookup(table, 3) == []
      assert [{4, %Error{message: "error 4"}}] = :ets.lookup(table, 4)
      last = "error #{kept + 3}"
      assert [{_, %Error{message: ^last}}] = :ets.lookup(table, kept + 3)
    end

    test "a request split over two partitions comes back in row order", %{bin: bin} do
      # partition 0 takes the first batch (A and B's row 0) and is slow: B's rows 1-2 come back
      # from partition 1 first
      slow_rt =
        Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:30000"}])

      slow = HexagonTpu.load_model!({:binary, bin}, runtime: slow_rt, graph: "abc")
      fast = load!(bin, "abc")
      name = serve([slow, fast], [])
      a = t([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])
      b = t([[0, 1, 0, 1], [1, 0, 1, 0], [2, 2, 2, 2]])
      c = t([[1], [2], [3]])

      {result_a, result_b} = a_then_b(name, [a, b, c], [b, a, c])
      assert flat(result_a) == {:ok, direct(fast, [a, b, c])}
      assert flat(result_b) == {:ok, direct(fast, [b, a, c])}
    end

    test "under load every answer is the caller's own, in order, with its own error", %{bin: bin} do
      models = [load!(bin, "abc"), load!(bin, "abc")]
      name = serve(models, batch_size: 8, batch_timeout: 1)
      oracle = hd(models)

      results =
        for(caller <- 1..16, k <- 1..25, do: {caller, k})
        |> Task.async_stream(
          fn {caller, k} ->
            rows = rem(caller + k, 3) + 1
            base = caller * 100 + k
            a = Nx.iota({rows, 4}, type: {:f, 32}) |> Nx.multiply(0.1) |> Nx.add(rem(base, 7))
            b = Nx.iota({rows, 4}, type: {:f, 32}) |> Nx.multiply(0.5) |> Nx.add(rem(base, 5))
            c = Nx.iota({rows, 1}, type: {:f, 32}) |> Nx.add(rem(base, 3) - 1)
            # every 9th request holds a NaN, in a row that varies
            a =
              if rem(base, 9) == 0,
                do: Nx.put_slice(a, [rem(base, rows), 1], Nx.tensor([[:nan]], type: {:f, 32})),
                else: a

            {[a, b, c], HexagonTpu.Serving.batched_run(name, [a, b, c])}
          end,
          max_concurrency: 16,
          timeout: 60_000
        )
        |> Enum.map(fn {:ok, r} -> r end)

      assert length(results) == 400

      for {inputs, result} <- results do
        case HexagonTpu.predict_batch(oracle, inputs, output: :nx) do
          {:ok, want} -> assert flat(result) == {:ok, Enum.map(want, &Nx.to_flat_list/1)}
          {:error, %Error{reason: :nan}} -> assert {:error, %Error{reason: :nan}} = result
        end
      end
    end

    test "bad requests and names are clear errors", %{bin: bin} do
      ab = load!(bin, "ab")
      name = serve(ab, [])
      x = t([[1, 2, 3, 4]])

      assert {:error, %Error{reason: :invalid_argument, message: msg}} =
               HexagonTpu.Serving.batched_run(name, [x | x])

      assert msg =~ "expected a proper list of inputs"
      assert msg =~ "improper list"

      for bad <- ["serving", self(), {:local, "x"}, {:other, name}, 42] do
        assert {:error, %Error{reason: :invalid_argument, message: msg}} =
                 HexagonTpu.Serving.batched_run(bad, [x, x])

        assert msg =~ "expected the name of an Nx.Serving"
        assert msg =~ inspect(bad)
      end
    end
  end
end
