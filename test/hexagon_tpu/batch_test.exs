defmodule HexagonTpu.BatchTest do
  use ExUnit.Case, async: true

  # HexagonTpu.predict_batch/3 with binaries (no Nx needed); the Nx side is
  # HexagonTpu.BatchNxTest below.

  import HexagonTpu.TestModels
  alias HexagonTpu.Error

  setup_all do
    %{
      # batch 1: rows of 4
      add1: HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference),
      # batch 4: rows of 3
      add4:
        HexagonTpu.load_model!({:binary, build!(batch_models())},
          backend: :reference,
          graph: "add_b4"
        ),
      scale2:
        HexagonTpu.load_model!({:binary, build!(batch_models())},
          backend: :reference,
          graph: "scale_b2"
        ),
      uneven:
        HexagonTpu.load_model!({:binary, build!(batch_models())},
          backend: :reference,
          graph: "flatten"
        )
    }
  end

  defp rows(n, width, base), do: for(r <- 0..(n - 1), c <- 0..(width - 1), do: base + r * 10 + c)

  test "batch 1: N rows run as one execute (batch multiple) and come back as N rows",
       %{add1: m} do
    a = rows(5, 4, 1.0)
    b = rows(5, 4, 100.0)
    before = HexagonTpu.stats().executes

    assert {:ok, [y], stats} =
             HexagonTpu.predict_batch(m, [f32(a), f32(b)], output: :binary, stats: true)

    assert from_f32(y) == Enum.zip_with(a, b, &(&1 + &2))
    assert stats.chunks == 5
    # one core call, one graphExecute with the batch dimension x 5 (batch_multiple_test.exs)
    assert stats.executes == 1
    assert HexagonTpu.stats().executes - before >= 1
    # one row is a plain predict
    assert {:ok, [y1]} = HexagonTpu.predict_batch(m, add_inputs(), output: :binary)

    assert from_f32(y1) == [2.0, 3.0, 4.0, 5.0]
  end

  test "batch 4: full chunks and a padded last one, padding removed", %{add4: m} do
    for n <- [1, 3, 4, 5, 8, 11] do
      a = rows(n, 3, 0.5)
      b = rows(n, 3, -2.0)

      assert {:ok, [y], %{chunks: chunks}} =
               HexagonTpu.predict_batch(m, [f32(a), f32(b)], output: :binary, stats: true)

      assert byte_size(y) == n * 3 * 4, "#{n} rows"
      assert from_f32(y) == Enum.zip_with(a, b, &(&1 + &2))
      assert chunks == div(n + 3, 4)
    end
  end

  test "quantized graph of batch 2: quantize: :none and dequantize: :none rows", %{scale2: m} do
    # u8 codes 138 = 1.0; times s = [1.0, 2.0] -> y codes 138, 148
    x = :binary.copy(<<138, 138>>, 3)

    assert {:ok, [y]} =
             HexagonTpu.predict_batch(m, [x], quantize: :none, dequantize: :none, output: :binary)

    assert y == :binary.copy(<<138, 148>>, 3)

    assert {:ok, [yf]} =
             HexagonTpu.predict_batch(m, [f32([1.0, 1.0, 2.0, 2.0, 3.0, 3.0])], output: :binary)

    assert_close(from_f32(yf), [1.0, 2.0, 2.0, 4.0, 3.0, 6.0])
  end

  test "byte counts that are not whole rows name the row size", %{add1: m, add4: m4} do
    assert {:error, %Error{reason: :mismatch, tensor: "a", message: msg}} =
             HexagonTpu.predict_batch(m, [f32([1, 2, 3]), f32([1, 2, 3, 4])])

    assert msg =~ "input 'a' (0)"
    assert msg =~ "rows of 16 bytes (4 f32 elements each: shape {n, 4}"
    assert msg =~ "got 12 bytes"

    assert {:error, %Error{reason: :mismatch, message: msg}} =
             HexagonTpu.predict_batch(m4, [f32(rows(2, 3, 0.0)), f32(rows(3, 3, 0.0))])

    assert msg =~ "different numbers of rows: 'a' 2, 'b' 3"

    assert {:error, %Error{reason: :mismatch}} = HexagonTpu.predict_batch(m, [<<>>, <<>>])

    assert {:error, %Error{reason: :mismatch, message: msg}} =
             HexagonTpu.predict_batch(m, [f32([1, 2, 3, 4])])

    assert msg =~ "expects 2 input(s) (a, b), got 1"
    assert {:error, %Error{reason: :invalid_argument}} = HexagonTpu.predict_batch(m, :nope)

    assert {:error, %Error{reason: :invalid_option, message: msg}} =
             HexagonTpu.predict_batch(m, [], bogus: 1)

    assert msg =~ "HexagonTpu.predict_batch/3: unknown option :bogus"
  end

  test "a graph whose tensors do not share a leading dimension cannot be batched", %{uneven: m} do
    assert {:error, %Error{reason: :invalid_argument, message: msg}} =
             HexagonTpu.predict_batch(m, [f32(rows(2, 3, 0.0))])

    assert msg =~ "graph 'flatten' cannot be batched"
    assert msg =~ "'x' {2, 3}, 'y' {6}"
  end

  test "the NIF's batch execute checks its chunks", %{add1: m} do
    # 24 bytes are not 5 equal chunks: refused before any execute
    six = f32([1, 2, 3, 4, 5, 6])
    ab = [{six, :f32}, {six, :f32}]

    assert {:error, %Error{reason: :mismatch, message: msg}} =
             HexagonTpu.Error.wrap(HexagonTpu.NIF.graph_execute_batch(m.ref, ab, [:f32], nil, 5))

    assert msg =~ "input 0: 24 bytes are not 5 equal chunks"

    assert_raise ArgumentError, fn ->
      HexagonTpu.NIF.graph_execute_batch(m.ref, ab, [:f32], nil, 0)
    end

    # 2 chunks of 12 bytes, not the graph's 16: the core's mismatch, before any execute (the
    # graph takes a batch multiple: one core call of both chunks)
    assert {:error, {:mismatch, msg, _, _}} =
             HexagonTpu.NIF.graph_execute_batch(m.ref, ab, [:f32], nil, 2)

    assert msg =~ "batch_multiple 2 expects 2 x 16 bytes = 32"

    # each chunk's part of the (uninitialized) output is written only by its own execute
    a = f32(rows(3, 4, 0.0))

    assert {:ok, [y], %{execute_ns: _}} =
             HexagonTpu.NIF.graph_execute_batch(m.ref, [{a, :f32}, {a, :f32}], [:f32], nil, 3)

    assert from_f32(y) == Enum.map(rows(3, 4, 0.0), &(&1 * 2))
  end

  test "an execute error names its chunk and rows", %{scale2: m} do
    # a NaN in row 3 (chunk 1 of a batch-2 graph) fails while quantizing that chunk
    nan = <<0x7FC00000::32-native>>
    x = f32([1.0, 1.0, 1.0, 1.0, 1.0]) <> nan <> f32([1.0, 1.0])

    assert {:error, %Error{reason: :nan, message: msg}} = HexagonTpu.predict_batch(m, [x])
    assert msg =~ "chunk 1 of 2: rows 2..3 of 4"
  end
end

# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.BatchNxTest do
    use ExUnit.Case, async: true

    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    import HexagonTpu.TestModels
    alias HexagonTpu.Error

    setup_all do
      %{
        add1: HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference),
        add4:
          HexagonTpu.load_model!({:binary, build!(batch_models())},
            backend: :reference,
            graph: "add_b4"
          )
      }
    end

    test "tensors of N rows in, tensors of N rows out", %{add1: m, add4: m4} do
      a = Nx.iota({7, 4}, type: {:f, 32})
      b = Nx.broadcast(Nx.tensor(0.5, type: {:f, 32}), {7, 4})
      assert {:ok, [y]} = HexagonTpu.predict_batch(m, [a, b])
      assert Nx.shape(y) == {7, 4}
      assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.add(a, b))

      a4 = Nx.iota({5, 3}, type: {:f, 32})
      assert {:ok, [y4]} = HexagonTpu.predict_batch(m4, [a4, a4])
      assert Nx.shape(y4) == {5, 3}
      assert Nx.to_flat_list(y4) == Nx.to_flat_list(Nx.multiply(a4, 2))
    end

    test "other float types are converted once for the whole batch", %{add1: m} do
      a = Nx.iota({3, 4}, type: {:f, 64})
      h = Nx.iota({3, 4}, type: {:bf, 16})
      assert {:ok, [y]} = HexagonTpu.predict_batch(m, [a, h])
      assert Nx.type(y) == {:f, 32}
      assert Nx.to_flat_list(y) == Nx.to_flat_list(Nx.multiply(Nx.iota({3, 4}), 2))
    end

    test "shape errors name both shapes; vectorized tensors are refused", %{add1: m} do
      ok = Nx.iota({3, 4}, type: {:f, 32})

      assert {:error, %Error{reason: :mismatch, tensor: "a", message: msg}} =
               HexagonTpu.predict_batch(m, [Nx.iota({3, 5}, type: {:f, 32}), ok])

      assert msg =~ "expected shape {n, 4} (n >= 1 rows of the graph's {1, 4}), got {3, 5}"

      assert {:error, %Error{message: msg}} = HexagonTpu.predict_batch(m, [Nx.iota({12}), ok])
      assert msg =~ "got {12}"

      assert {:error, %Error{message: msg}} =
               HexagonTpu.predict_batch(m, [Nx.vectorize(ok, :v), ok])

      assert msg =~ "vectorized"

      assert {:error, %Error{message: msg}} =
               HexagonTpu.predict_batch(m, [Nx.iota({3, 4}, type: {:s, 64}), ok])

      assert msg =~ "expected a float type"
    end
  end
end
