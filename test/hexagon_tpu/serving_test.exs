# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.ServingTest do
    use ExUnit.Case, async: true

    # HexagonTpu.Serving with the real Nx.Serving: inline runs, batched runs under a supervisor,
    # one caller's bad input, a batch whose execute fails, partitions. Runs only with Nx.
    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    import HexagonTpu.TestModels
    alias HexagonTpu.{Error, Runtime}

    setup_all do
      path = build_file!(add_f32())
      %{path: path, add: HexagonTpu.load_model!(path, backend: :reference)}
    end

    defp name, do: :"serving_#{System.unique_integer([:positive])}"

    defp row(x), do: Nx.tensor([[x, x + 1, x + 2, x + 3]], type: {:f, 32})

    test "Nx.Serving.run/2 runs a request inline", %{add: add} do
      serving = HexagonTpu.Serving.new(add)
      a = Nx.iota({3, 4}, type: {:f, 32})
      assert [y] = Nx.Serving.run(serving, [a, a])
      assert Nx.shape(y) == {3, 4}
      assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.multiply(a, 2))
    end

    test "batched_run: concurrent callers each get their own rows back", %{path: path} do
      serving =
        HexagonTpu.Serving.new(path, backend: :reference, batch_size: 16, batch_timeout: 20)

      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})

      results =
        1..40
        |> Task.async_stream(
          fn i ->
            x = row(i * 1.0)
            {i, Nx.Serving.batched_run(name, [x, x])}
          end,
          max_concurrency: 40,
          ordered: false
        )
        |> Enum.map(fn {:ok, r} -> r end)

      for {i, [y]} <- results do
        assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.multiply(row(i * 1.0), 2))
      end

      assert length(results) == 40
      # binaries in, binaries out; several rows in one request
      s2 = HexagonTpu.Serving.new(path, backend: :reference, output: :binary)
      name2 = name()
      start_supervised!({Nx.Serving, serving: s2, name: name2}, id: name2)
      a = f32([1, 2, 3, 4, 5, 6, 7, 8])
      assert {:ok, [y]} = HexagonTpu.Serving.batched_run(name2, [a, a])
      assert from_f32(y) == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]
    end

    test "a bad request fails alone; the others in its batch get results", %{path: path} do
      serving =
        HexagonTpu.Serving.new(path, backend: :reference, batch_size: 64, batch_timeout: 50)

      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})

      bad = %{
        3 => [Nx.iota({1, 5}, type: {:f, 32}), row(0.0)],
        5 => [Nx.iota({1, 4}, type: {:s, 64}), row(0.0)],
        7 => [f32([1, 2, 3]), f32([1, 2, 3])],
        9 => [row(0.0)]
      }

      results =
        1..12
        |> Task.async_stream(
          fn i ->
            inputs = Map.get(bad, i, [row(i * 1.0), row(1.0)])
            {i, HexagonTpu.Serving.batched_run(name, inputs)}
          end,
          max_concurrency: 12
        )
        |> Map.new(fn {:ok, r} -> r end)

      for i <- 1..12, not Map.has_key?(bad, i) do
        assert {:ok, [y]} = results[i]
        assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.add(row(i * 1.0), row(1.0)))
      end

      assert {:error, %Error{reason: :mismatch, tensor: "a", message: m3}} = results[3]
      assert m3 =~ "expected shape {n, 4} (n >= 1 rows of the graph's {1, 4}), got {1, 5}"
      assert {:error, %Error{reason: :mismatch, message: m5}} = results[5]
      assert m5 =~ "expected a float type"
      assert m5 =~ "got {:s, 64}"
      assert {:error, %Error{reason: :mismatch, message: m7}} = results[7]
      assert m7 =~ "rows of 16 bytes"
      assert {:error, %Error{reason: :mismatch, message: m9}} = results[9]
      assert m9 =~ "expects 2 input(s) (a, b), got 1"

      # Nx.Serving.batched_run/2 itself raises the error in the caller
      assert_raise Error, ~r/got \{1, 5\}/, fn -> Nx.Serving.batched_run(name, bad[3]) end
    end

    test "an execute that fails fails its batch with the error; the serving goes on" do
      scale =
        HexagonTpu.load_model!({:binary, build!(two_graphs())},
          backend: :reference,
          graph: "scale_u8"
        )

      name = name()
      serving = HexagonTpu.Serving.new(scale, batch_size: 8, batch_timeout: 0)
      start_supervised!({Nx.Serving, serving: serving, name: name})
      nan = <<0x7FC00000::32-native>> <> f32([1, 2, 3])

      assert {:error, %Error{reason: :nan, message: msg}} =
               HexagonTpu.Serving.batched_run(name, [nan])

      assert msg =~ "chunk 0 of 1"
      assert {:ok, [y]} = HexagonTpu.Serving.batched_run(name, [f32([1, 2, 3, 4])])
      assert_close(Nx.to_flat_list(y), [1.0, 4.0, 9.0, 12.7])
    end

    test "a NaN fails only the request holding it; the others in its batch get results" do
      scale =
        HexagonTpu.load_model!({:binary, build!(two_graphs())},
          backend: :reference,
          graph: "scale_u8"
        )

      # the batch runs when its 4 rows are there (the timeout is far longer than the test), so
      # the three requests share it
      serving = HexagonTpu.Serving.new(scale, batch_size: 4, batch_timeout: 600_000)
      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})
      nan = <<0x7FC00000::32-native>> <> f32([1, 2, 3])
      requests = [[f32([1, 2, 3, 4])], [nan], [f32([1, 2, 3, 4, 1, 2, 3, 4])]]

      results =
        requests
        |> Task.async_stream(&HexagonTpu.Serving.batched_run(name, &1), max_concurrency: 3)
        |> Enum.map(fn {:ok, r} -> r end)

      assert [{:ok, [y1]}, {:error, %Error{reason: :nan, message: msg}}, {:ok, [y3]}] = results
      assert_close(Nx.to_flat_list(y1), [1.0, 4.0, 9.0, 12.7])
      assert Nx.shape(y3) == {2, 4}
      assert_close(Nx.to_flat_list(y3), [1.0, 4.0, 9.0, 12.7, 1.0, 4.0, 9.0, 12.7])
      # the error names the request's own rows, not the shared batch's
      assert msg =~ "chunk 0 of 1"
    end

    test "requests larger than a batch are split by batched_run/3 and come back whole" do
      # two_out: a, b f32 [2] -> s = a + b, p = a * b; the graph's batch is 2 rows
      model =
        HexagonTpu.load_model!({:binary, build!(mixed())}, backend: :reference, graph: "two_out")

      serving = HexagonTpu.Serving.new(model, batch_size: 4, batch_timeout: 5)
      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})

      results =
        1..24
        |> Task.async_stream(
          fn i ->
            # 1..6 rows: requests of 5 and 6 rows are split over requests of 4 by batched_run/3
            rows = rem(i, 6) + 1
            a = Nx.iota({rows}, type: {:f, 32}) |> Nx.add(i * 10.0)
            b = Nx.broadcast(Nx.tensor(i * 1.0, type: {:f, 32}), {rows})
            {a, b, HexagonTpu.Serving.batched_run(name, [a, b])}
          end,
          max_concurrency: 24
        )
        |> Enum.map(fn {:ok, r} -> r end)

      for {a, b, {:ok, [s, p]}} <- results do
        assert Nx.to_flat_list(s) == Nx.to_flat_list(Nx.add(a, b))
        assert Nx.to_flat_list(p) == Nx.to_flat_list(Nx.multiply(a, b))
      end

      assert length(results) == 24

      # binaries are split at row boundaries too
      a = f32(Enum.to_list(1..9))
      assert {:ok, [s, p]} = HexagonTpu.Serving.batched_run(name, [a, a])
      assert Nx.to_flat_list(s) == Enum.map(1..9, &(2.0 * &1))
      assert Nx.to_flat_list(p) == Enum.map(1..9, &(1.0 * &1 * &1))

      # Nx.Serving itself would split it and join the pieces wrongly: refused, naming both numbers
      a = Nx.iota({5}, type: {:f, 32})

      assert_raise Error,
                   ~r/a request of 5 rows is larger than the serving's batch_size of 4/,
                   fn ->
                     Nx.Serving.batched_run(name, [a, a])
                   end

      assert_raise Error, ~r/HexagonTpu.Serving.batched_run\/3.*predict_batch\/3/, fn ->
        Nx.Serving.run(serving, [a, a])
      end

      # batched_run/3 splits by these numbers, not by reading the message.
      error = assert_raise Error, fn -> Nx.Serving.batched_run(name, [a, a]) end
      assert %Error{reason: :too_large, details: %{rows: 5, batch_size: 4}} = error
    end

    test "a split request whose first piece fails fails whole, naming the piece's rows" do
      scale =
        HexagonTpu.load_model!({:binary, build!(two_graphs())},
          backend: :reference,
          graph: "scale_u8"
        )

      serving = HexagonTpu.Serving.new(scale, batch_size: 4, batch_timeout: 0)
      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})
      # 8 rows of 4 (the graph's batch is 1 row of 4); a NaN in row 0 only
      request = <<0x7FC00000::32-native>> <> f32(List.duplicate(1.0, 31))

      assert {:error, %Error{reason: :nan, message: msg}} =
               HexagonTpu.Serving.batched_run(name, [request])

      assert msg =~ "rows 0..3 of the request's 8: "
      # the NaN in the last piece fails the request too
      request = f32(List.duplicate(1.0, 31)) <> <<0x7FC00000::32-native>>

      assert {:error, %Error{reason: :nan, message: msg}} =
               HexagonTpu.Serving.batched_run(name, [request])

      assert msg =~ "rows 4..7 of the request's 8: "
    end

    test "a split request comes back in row order when a slower partition runs its first rows" do
      bin = build!(add_f32())
      # the first batch goes to partition 0, whose every execute takes 50 ms more
      slow_rt =
        Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:50000"}])

      slow = HexagonTpu.load_model!({:binary, bin}, runtime: slow_rt)
      fast = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
      serving = HexagonTpu.Serving.new([slow, fast], batch_size: 4, batch_timeout: 0)
      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})
      a = Nx.iota({8, 4}, type: {:f, 32})
      zero = Nx.broadcast(Nx.tensor(0.0, type: {:f, 32}), {8, 4})

      for _ <- 1..3 do
        assert {:ok, [y]} = HexagonTpu.Serving.batched_run(name, [a, zero])
        assert Nx.to_flat_list(y) == Nx.to_flat_list(a)
      end
    end

    test "a padded Nx.Batch runs its padding rows too", %{add: add} do
      # Nx.Serving never pads this module's batches; a batch padded by hand cannot be read
      # request by request, and then its tensors are read by traversing it.
      serving = HexagonTpu.Serving.new(add)
      {:ok, state} = HexagonTpu.Serving.init(:inline, serving.arg, [[]])
      a = Nx.iota({3, 4}, type: {:f, 32})
      {batch, 3} = serving.client_preprocessing.([a, a])
      {:execute, fun, _} = HexagonTpu.Serving.handle_batch(Nx.Batch.pad(batch, 2), 0, state)
      assert {{y, info}, %{batch_size: 3}} = fun.()
      assert Nx.shape(y) == {5, 4}
      assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.multiply(a, 2)) ++ List.duplicate(0.0, 8)
      # the rows' indices in their request, the padding's 0
      assert Nx.to_flat_list(info) == [0, 1, 2, 0, 0]
    end

    test "quantize: :none takes requests in the input's own type" do
      scale =
        HexagonTpu.load_model!({:binary, build!(two_graphs())},
          backend: :reference,
          graph: "scale_u8"
        )

      serving = HexagonTpu.Serving.new(scale, quantize: :none, dequantize: :none)
      q = Nx.tensor([[138, 138, 138, 138]], type: {:u, 8})
      assert [y] = Nx.Serving.run(serving, q)
      assert Nx.to_flat_list(y) == [138, 148, 158, 168]

      assert_raise Error, ~r/expected type \{:u, 8\}.*got \{:f, 32\}/, fn ->
        Nx.Serving.run(serving, row(1.0))
      end
    end

    test "bad options and models raise a clear error", %{add: add} do
      assert_raise Error, ~r/expected :batch_size to be a positive integer, got 0/, fn ->
        HexagonTpu.Serving.new(add, batch_size: 0)
      end

      assert_raise Error, ~r/partitions: 2 loads copies from a source/, fn ->
        HexagonTpu.Serving.new(add, partitions: 2)
      end

      assert_raise Error, ~r/unknown option :bogus/, fn ->
        HexagonTpu.Serving.new(add, bogus: 1)
      end

      uneven =
        HexagonTpu.load_model!({:binary, build!(batch_models())},
          backend: :reference,
          graph: "flatten"
        )

      assert_raise Error, ~r/cannot be batched/, fn -> HexagonTpu.Serving.new(uneven) end
    end

    test "batched_run/3 gives up after its :timeout with a :timeout error" do
      # every execute takes 1 s more: far longer than the timeout
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:1000000"}])
      slow = HexagonTpu.load_model!({:binary, build!(add_f32())}, runtime: rt)
      serving = HexagonTpu.Serving.new(slow, batch_size: 1, batch_timeout: 0)
      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name}, id: :slow)

      assert {:error, %Error{reason: :timeout, message: msg}} =
               HexagonTpu.Serving.batched_run(name, [row(1.0), row(1.0)], timeout: 20)

      assert msg =~ "did not answer within 20 ms"

      assert {:error, %Error{reason: :invalid_option, message: msg}} =
               HexagonTpu.Serving.batched_run(name, [row(1.0), row(1.0)], timeout: 0)

      assert msg =~ "expected :timeout to be a positive integer (milliseconds) or :infinity"
      # the serving finishes the execute when stopped; its answer reaches nobody here
      stop_supervised!(:slow)
      refute_received _
    end

    test "batched_run/3 on a name nobody serves is :unavailable, not a hang" do
      assert {:error, %Error{reason: :unavailable, message: msg}} =
               HexagonTpu.Serving.batched_run(:no_such_serving, [row(1.0), row(1.0)])

      assert msg =~ ":no_such_serving"
      assert msg =~ "no process serves it on any node"

      assert {:error, %Error{reason: :unavailable, message: msg}} =
               HexagonTpu.Serving.batched_run({:local, :no_such_serving}, [row(1.0), row(1.0)])

      assert msg =~ "no process serves it on this node"
    end
  end

  defmodule HexagonTpu.ServingPartitionsTest do
    # Not async: the test counts Nx.Serving's execute events, which every serving emits.
    use ExUnit.Case, async: false

    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)
    @compile {:no_warn_undefined, [:telemetry]}

    import HexagonTpu.TestModels
    alias HexagonTpu.Runtime

    defp name, do: :"serving_#{System.unique_integer([:positive])}"

    defp row(x), do: Nx.tensor([[x, x + 1, x + 2, x + 3]], type: {:f, 32})

    test "partitions: batches run on each model copy" do
      # graphExecute takes 20 ms, so a batch formed meanwhile goes to the other partition
      rt = Runtime.open!(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:20000"}])
      bin = build!(add_f32())
      models = for _ <- 1..2, do: HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      serving = HexagonTpu.Serving.new(models, batch_size: 2, batch_timeout: 0)
      name = name()
      start_supervised!({Nx.Serving, serving: serving, name: name})
      parent = self()
      id = "partitions-#{name}"

      if HexagonTpu.Telemetry.enabled?() do
        :telemetry.attach(
          id,
          [:nx, :serving, :execute, :stop],
          &__MODULE__.send_partition/4,
          parent
        )
      end

      # 8 rows reach the serving back to back: 4 batches of 2; while partition 0 runs the first,
      # the second goes to partition 1
      calls = for i <- 1..8, do: fn -> Nx.Serving.batched_run(name, [row(i * 1.0), row(0.0)]) end

      for {[y], i} <- Enum.with_index(HexagonTpu.ServingOrder.in_order(name, calls), 1) do
        assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.add(row(i * 1.0), row(0.0)))
      end

      if HexagonTpu.Telemetry.enabled?() do
        # Received before detaching: Nx.Serving answers the callers inside the execute span and
        # emits its :stop after, so the last batch's event can follow the last answer. Every
        # batch's event, however the 8 rows were batched.
        seen = partitions_of_rows(8)
        :telemetry.detach(id)
        assert Enum.sort(Enum.uniq(seen)) == [0, 1]
      end

      # a source loads one copy per partition
      path = build_file!(add_f32())
      s = HexagonTpu.Serving.new(path, backend: :reference, partitions: 3)
      assert length(s.arg.models) == 3
      assert length(Enum.uniq_by(s.arg.models, & &1.ref)) == 3
    end

    # telemetry handlers as remote functions (:telemetry logs about anonymous ones)
    def send_partition(_event, _m, %{metadata: meta}, parent),
      do: send(parent, {:partition, meta.partition, meta.batch_size})

    defp partitions_of_rows(rows) when rows <= 0, do: []

    defp partitions_of_rows(rows) do
      assert_receive {:partition, p, n}
      [p | partitions_of_rows(rows - n)]
    end
  end

  defmodule HexagonTpu.ServingTelemetryTest do
    use ExUnit.Case, async: false

    @moduletag :nx
    @moduletag :telemetry
    @moduletag skip:
                 HexagonTpu.TestModels.optional_skip(:nx) ||
                   HexagonTpu.TestModels.optional_skip(:telemetry)
    @compile {:no_warn_undefined, [:telemetry]}

    import HexagonTpu.TestModels

    def send_event(event, _m, meta, parent), do: send(parent, {event, meta})

    test "Nx.Serving's execute events and hexagon_tpu's, with the batch size" do
      path = build_file!(add_f32())
      # A full batch runs at once: the long timeout only keeps a slow machine from cutting the
      # 8 requests into two batches.
      serving =
        HexagonTpu.Serving.new(path, backend: :reference, batch_size: 8, batch_timeout: 10_000)

      name = :"serving_tel_#{System.unique_integer([:positive])}"
      start_supervised!({Nx.Serving, serving: serving, name: name})
      parent = self()
      id = "serving-telemetry-#{name}"

      :telemetry.attach_many(
        id,
        [[:nx, :serving, :execute, :stop], [:hexagon_tpu, :execute, :stop]],
        &__MODULE__.send_event/4,
        parent
      )

      on_exit(fn -> :telemetry.detach(id) end)
      x = Nx.iota({1, 4}, type: {:f, 32})

      # 8 requests of one row each fill one batch of 8
      1..8
      |> Task.async_stream(fn _ -> Nx.Serving.batched_run(name, [x, x]) end, max_concurrency: 8)
      |> Enum.each(fn {:ok, [_]} -> :ok end)

      assert_receive {[:nx, :serving, :execute, :stop],
                      %{metadata: %{batch_size: 8, partition: 0}}}

      # the batch's 8 executes in one span
      assert_receive {[:hexagon_tpu, :execute, :stop], %{batch_size: 8, chunks: 8, status: :ok}}
    end
  end
end

defmodule HexagonTpu.ServingWithoutNxTest do
  use ExUnit.Case, async: true

  # Runs in both suites: without Nx, new/2 says what is missing; with Nx it returns a serving.
  import HexagonTpu.TestModels

  test "new/2 needs Nx and says so" do
    model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)

    if HexagonTpu.NxTensors.usable?() do
      assert %{__struct__: Nx.Serving, module: HexagonTpu.Serving} = HexagonTpu.Serving.new(model)
    else
      assert_raise HexagonTpu.Error, ~r/Nx is not loaded.*add \{:nx, "~> 0.7"\}/, fn ->
        HexagonTpu.Serving.new(model)
      end
    end
  end
end
