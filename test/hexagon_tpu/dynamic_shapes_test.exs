defmodule HexagonTpu.DynamicShapesTest do
  # Outputs with dynamic dimensions (the binary's isDynamicDimensions; QnnGraph.h: the backend
  # writes an output's dims back after an execute), through the reference backend's NonZero:
  # TensorInfo says which axis, and every path that answers (predict on each scheduler,
  # predict_async, stream) answers in the shape the execute wrote, checked against the
  # row-major scan of the input computed here.
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Graph, TensorInfo}

  @model """
  graph nz
    input x f32 [2,3]
    output idx i32 [6,2] dynamic=[0]
    output r f32 [2,3]
    op NonZero x -> idx
    op Relu x -> r
  """

  setup_all do
    %{model: HexagonTpu.load_model!({:binary, build!(@model)}, backend: :reference)}
  end

  # x's nonzero elements as [row, col] pairs, in row-major order
  defp oracle(x) do
    for {v, i} <- Enum.with_index(x), v != 0.0, do: [div(i, 3), rem(i, 3)]
  end

  defp i32(bin), do: for(<<v::signed-32-native <- bin>>, do: v)

  @inputs [
    [0.0, 1.5, 0.0, -2.0, 0.0, 3.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    [0.0, 0.0, 7.0, 0.0, 0.0, 0.0]
  ]

  test "TensorInfo says which axis is dynamic; the shape is its maximum", %{model: m} do
    assert [%TensorInfo{name: "x", dynamic_dims: []}] = Graph.inputs(m)

    assert [
             %TensorInfo{name: "idx", shape: {6, 2}, dynamic_dims: [0]},
             %TensorInfo{dynamic_dims: []}
           ] = Graph.outputs(m)
  end

  test "every path answers in the shape the execute wrote", %{model: m} do
    for x <- @inputs do
      want = oracle(x)
      k = length(want)

      for scheduler <- [:auto, :normal, :dirty_io] do
        opts = [output: :binary, dequantize: :none, stats: true, scheduler: scheduler]
        assert {:ok, [idx, r], stats} = HexagonTpu.predict(m, [f32(x)], opts)
        assert stats.output_shapes == [{k, 2}, {2, 3}], inspect({scheduler, x})
        assert byte_size(idx) == k * 2 * 4
        assert Enum.chunk_every(i32(idx), 2) == want
        assert from_f32(r) == Enum.map(x, &max(&1, 0.0))
      end

      {:ok, call} = HexagonTpu.predict_async(m, [f32(x)], output: :binary, dequantize: :none)
      assert {:ok, [idx, _]} = HexagonTpu.await(call, 10_000)
      assert Enum.chunk_every(i32(idx), 2) == want
    end

    streamed =
      m
      |> HexagonTpu.stream(Enum.map(@inputs, &[f32(&1)]), output: :binary, dequantize: :none)
      |> Enum.map(fn {:ok, [idx, _]} -> Enum.chunk_every(i32(idx), 2) end)

    assert streamed == Enum.map(@inputs, &oracle/1)
  end

  test "an f32 answer holds as many values as were produced", %{model: m} do
    x = hd(@inputs)
    assert {:ok, [idx, _]} = HexagonTpu.predict(m, [f32(x)], output: :binary)

    assert Enum.chunk_every(from_f32(idx), 2) ==
             Enum.map(oracle(x), fn p -> Enum.map(p, &(&1 * 1.0)) end)
  end

  test "a batch and shared IO are refused, naming the output", %{model: m} do
    # leading dimensions that agree (3), so the batch is the NIF's to refuse
    one =
      HexagonTpu.load_model!(
        {:binary,
         build!("""
         graph nz1
           input x f32 [3]
           output idx u32 [3,1] dynamic=[0]
           op NonZero x -> idx
         """)},
        backend: :reference
      )

    assert {:error, %Error{reason: :invalid_argument, message: msg}} =
             HexagonTpu.predict_batch(one, [f32([1, 0, 1, 0, 0, 2])], output: :binary)

    assert msg =~ "output 'idx' has dynamic dimensions"

    assert {:ok, [idx]} =
             HexagonTpu.predict(one, [f32([0, 4, 0])], output: :binary, dequantize: :none)

    assert i32(idx) == [1]
    HexagonTpu.close(one)

    assert {:error, %Error{reason: :unsupported, message: msg}} = Graph.alloc_io(m)
    assert msg =~ "output 'idx' has dynamic dimensions"
  end

  # Compiled only where Nx is loadable (`make test` runs without it): no code here calls a
  # missing Nx.
  if Code.ensure_loaded?(Nx) do
    @tag :nx
    @tag skip: HexagonTpu.TestModels.optional_skip(:nx)
    test "an Nx answer has the shape the execute wrote", %{model: m} do
      for x <- @inputs, (want = oracle(x)) != [] do
        assert {:ok, [idx, r]} = HexagonTpu.predict(m, [Nx.tensor([x]) |> Nx.reshape({2, 3})])
        assert Nx.shape(idx) == {length(want), 2}
        assert Nx.to_list(idx) == Enum.map(want, fn p -> Enum.map(p, &(&1 * 1.0)) end)
        assert Nx.shape(r) == {2, 3}
      end

      # nothing nonzero: an empty output, which Nx cannot hold; said, and :binary answers it
      zeros = Nx.broadcast(Nx.tensor(0.0, type: :f32), {2, 3})
      assert {:error, %Error{reason: :nx_error, message: msg}} = HexagonTpu.predict(m, [zeros])
      assert msg =~ "output 'idx' came out empty (shape {0, 2}), and Nx has no empty tensors"

      assert {:ok, [<<>>, _], %{output_shapes: [{0, 2}, {2, 3}]}} =
               HexagonTpu.predict(m, [zeros], output: :binary, stats: true)

      # vectorized inputs: one execute per entry, each of its own shape, cannot be joined
      v = Nx.vectorize(Nx.broadcast(Nx.tensor(1.0, type: :f32), {2, 2, 3}), :entry)

      assert {:error, %Error{reason: :invalid_argument, message: msg}} =
               HexagonTpu.predict(m, [v])

      assert msg =~ "output 'idx' has dynamic dimensions"
    end
  end
end
