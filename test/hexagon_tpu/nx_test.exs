# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.NxTest do
    use ExUnit.Case, async: true

    # Runs only when Nx is present (and so started); reported as skipped, with the reason,
    # otherwise.
    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

    import HexagonTpu.TestModels
    alias HexagonTpu.Error

    setup_all do
      %{
        add: HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference),
        scale:
          HexagonTpu.load_model!({:binary, build!(two_graphs())},
            backend: :reference,
            graph: "scale_u8"
          )
      }
    end

    test "f32 Nx tensors in, f32 Nx tensors of the output's shape out", %{add: add} do
      a = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 32})
      assert {:ok, [y]} = HexagonTpu.predict(add, [a, a])
      assert Nx.shape(y) == {1, 4}
      assert Nx.type(y) == {:f, 32}
      assert Nx.to_flat_list(y) == [2.0, 4.0, 6.0, 8.0]
    end

    test "f32 tensors are quantized; native u8 tensors pass as they are", %{scale: scale} do
      assert {:ok, [y]} =
               HexagonTpu.predict(scale, [Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 32})])

      assert_close(Nx.to_flat_list(y), [1.0, 4.0, 9.0, 12.7])

      q = Nx.tensor([[138, 138, 138, 138]], type: {:u, 8})
      assert {:ok, [n]} = HexagonTpu.predict(scale, [q], dequantize: :none)
      assert Nx.type(n) == {:u, 8}
      assert Nx.to_flat_list(n) == [138, 148, 158, 168]
    end

    test "shape and type mismatches name the tensor", %{add: add, scale: scale} do
      bad_shape = Nx.tensor([1.0, 2.0, 3.0, 4.0], type: {:f, 32})
      ok = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 32})

      assert {:error, %Error{reason: :mismatch, tensor: "a", message: msg}} =
               HexagonTpu.predict(add, [bad_shape, ok])

      assert msg =~ "expected shape {1, 4}, got {4}"

      s64 = Nx.tensor([[1, 2, 3, 4]], type: {:s, 64})
      assert {:error, %Error{tensor: "x", message: msg}} = HexagonTpu.predict(scale, [s64])
      assert msg =~ "expected type {:u, 8} (or {:f, 32} to quantize), got {:s, 64}"
      assert msg =~ "Nx.as_type(tensor, {:u, 8})"

      assert {:error, %Error{message: msg}} = HexagonTpu.predict(scale, [ok], quantize: :none)
      assert msg =~ "expected type {:u, 8}, got {:f, 32}"
    end

    test "output: :binary still returns binaries", %{add: add} do
      a = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 32})
      assert {:ok, [y]} = HexagonTpu.predict(add, [a, a], output: :binary)
      assert is_binary(y)
    end

    describe "other float types" do
      test "{:f, 64}, {:f, 16} and {:bf, 16} inputs are converted to f32", %{add: add} do
        b = Nx.tensor([[0.5, 0.5, 0.5, 0.5]], type: {:f, 32})

        for type <- [{:f, 64}, {:f, 16}, {:bf, 16}] do
          a = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: type)
          assert {:ok, [y]} = HexagonTpu.predict(add, [a, b]), inspect(type)
          assert Nx.to_flat_list(y) == [1.5, 2.5, 3.5, 4.5]
          # also with quantize: :none, the input being f32 itself
          assert {:ok, [^y]} = HexagonTpu.predict(add, [b, a], quantize: :none)
        end
      end

      test "a float tensor for a quantized input is converted, then quantized", %{scale: scale} do
        for type <- [{:f, 64}, {:f, 16}, {:bf, 16}] do
          x = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: type)
          assert {:ok, [y]} = HexagonTpu.predict(scale, [x]), inspect(type)
          assert_close(Nx.to_flat_list(y), [1.0, 4.0, 9.0, 12.7])
        end

        f64 = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 64})

        assert {:error, %Error{reason: :mismatch, message: msg}} =
                 HexagonTpu.predict(scale, [f64], quantize: :none)

        assert msg =~ "expected type {:u, 8}, got {:f, 64}"
        assert msg =~ "quantize: :auto quantizes float tensors"
      end

      test "integer types stay an error that says what to do", %{add: add} do
        ok = Nx.tensor([[1.0, 2.0, 3.0, 4.0]])

        for type <- [{:s, 32}, {:u, 8}, {:s, 64}] do
          a = Nx.tensor([[1, 2, 3, 4]], type: type)

          assert {:error, %Error{reason: :mismatch, tensor: "a", message: msg}} =
                   HexagonTpu.predict(add, [a, ok])

          assert msg =~ "got #{inspect(type)}: convert it with Nx.as_type(tensor, {:f, 32})"
        end
      end

      test "SharedIO.write_input/4 converts them too", %{add: add} do
        {:ok, io} = HexagonTpu.alloc_io(add)
        a = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 64})
        b = Nx.tensor([[1.0, 1.0, 1.0, 1.0]], type: {:bf, 16})
        assert :ok = HexagonTpu.SharedIO.write_inputs(io, [a, b])
        assert {:ok, ^io} = HexagonTpu.predict(add, io)
        assert {:ok, y} = HexagonTpu.SharedIO.read_output(io, 0)
        assert Nx.to_flat_list(y) == [2.0, 3.0, 4.0, 5.0]
        HexagonTpu.SharedIO.close(io)
      end
    end

    describe "vectorized tensors" do
      test "each entry is executed and the outputs are vectorized on the same axes", %{add: add} do
        a =
          Nx.tensor([[[1.0, 2.0, 3.0, 4.0]], [[10.0, 20.0, 30.0, 40.0]]]) |> Nx.vectorize(:batch)

        b = Nx.tensor([[1.0, 1.0, 1.0, 1.0]])

        assert {:ok, [y]} = HexagonTpu.predict(add, [a, b])
        assert y.vectorized_axes == [batch: 2]
        assert Nx.shape(y) == {1, 4}

        assert Nx.to_flat_list(Nx.devectorize(y)) ==
                 [2.0, 3.0, 4.0, 5.0, 11.0, 21.0, 31.0, 41.0]

        # both inputs vectorized, on the same axis
        assert {:ok, [y2]} = HexagonTpu.predict(add, [a, a])
        assert Nx.to_flat_list(Nx.devectorize(y2)) == [2.0, 4.0, 6.0, 8.0, 20.0, 40.0, 60.0, 80.0]
      end

      test "one entry keeps its vectorized axis", %{add: add} do
        a = Nx.tensor([[[1.0, 2.0, 3.0, 4.0]]]) |> Nx.vectorize(:batch)
        assert {:ok, [y]} = HexagonTpu.predict(add, [a, a])
        assert y.vectorized_axes == [batch: 1]
        assert Nx.shape(y) == {1, 4}
        assert Nx.to_flat_list(Nx.devectorize(y)) == [2.0, 4.0, 6.0, 8.0]
      end

      test "different axes broadcast against each other, as in Nx", %{add: add} do
        a = Nx.tensor([[[1.0, 2.0, 3.0, 4.0]], [[10.0, 20.0, 30.0, 40.0]]]) |> Nx.vectorize(:i)
        b = Nx.tensor([[[0.0, 0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0, 2.0]]])
        b = Nx.vectorize(b, :j)

        assert {:ok, [y]} = HexagonTpu.predict(add, [a, b])
        assert y.vectorized_axes == [i: 2, j: 3]
        expected = Nx.add(a, b)
        assert Nx.to_flat_list(Nx.devectorize(y)) == Nx.to_flat_list(Nx.devectorize(expected))
      end

      test "stats are added up over the entries; output: :binary concatenates them",
           %{add: add} do
        a =
          Nx.tensor([[[1.0, 2.0, 3.0, 4.0]], [[10.0, 20.0, 30.0, 40.0]]]) |> Nx.vectorize(:batch)

        assert {:ok, [y], stats} = HexagonTpu.predict(add, [a, a], stats: true)
        assert y.vectorized_axes == [batch: 2]
        assert is_integer(stats.execute_ns) and stats.execute_ns > 0

        assert {:ok, [bin]} = HexagonTpu.predict(add, [a, a], output: :binary)
        assert from_f32(bin) == [2.0, 4.0, 6.0, 8.0, 20.0, 40.0, 60.0, 80.0]
      end

      test "a wrong inner shape, or axes that do not broadcast, is an error", %{add: add} do
        ok = Nx.tensor([[1.0, 1.0, 1.0, 1.0]])
        short = Nx.tensor([[[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]]) |> Nx.vectorize(:batch)

        assert {:error, %Error{reason: :mismatch, tensor: "a", message: msg}} =
                 HexagonTpu.predict(add, [short, ok])

        assert msg =~ "expected shape {1, 4}, got {1, 3} (vectorized entry 0 of 2)"

        two = Nx.iota({2, 1, 4}, type: {:f, 32}) |> Nx.vectorize(:batch)
        three = Nx.iota({3, 1, 4}, type: {:f, 32}) |> Nx.vectorize(:batch)

        assert {:error, %Error{reason: :mismatch, message: msg}} =
                 HexagonTpu.predict(add, [two, three])

        assert msg =~ "cannot be broadcast to the same vectorized axes"
      end
    end

    test "SharedIO.write_input/4 refuses a vectorized tensor: a buffer holds one entry", %{
      add: add
    } do
      {:ok, io} = HexagonTpu.alloc_io(add)
      a = Nx.tensor([[[1.0, 2.0, 3.0, 4.0]]]) |> Nx.vectorize(:batch)

      assert {:error, %Error{reason: :mismatch, message: msg}} =
               HexagonTpu.SharedIO.write_input(io, 0, a)

      assert msg =~ "got a vectorized tensor ([batch: 1]): one buffer holds one entry"
      HexagonTpu.SharedIO.close(io)
    end

    # A backend module Nx accepts (it has init/1) that implements nothing else: every tensor
    # built in a process that made it its default backend fails inside Nx.
    defmodule BrokenBackend do
      def init(opts), do: opts
    end

    test "Nx failing on an output after a successful execute is an error, not a raise",
         %{add: add} do
      Nx.default_backend(BrokenBackend)
      bin = f32([1, 2, 3, 4])

      assert {:error, %Error{reason: :nx_error, tensor: "y", message: msg}} =
               HexagonTpu.predict(add, [bin, bin])

      assert msg =~ "graph 'add_f32' output 'y': Nx could not build the tensor"
      assert {:ok, [y]} = HexagonTpu.predict(add, [bin, bin], output: :binary)
      assert from_f32(y) == [2.0, 4.0, 6.0, 8.0]
    end
  end
end
