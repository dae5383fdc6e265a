defmodule HexagonTpu.NxTest do
  use ExUnit.Case, async: true

  # Runs only when Nx is present (and so started); reported as skipped, with the reason,
  # otherwise.
  @moduletag :nx
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)
  @compile {:no_warn_undefined, [Nx]}

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

    assert {:error, %Error{message: msg}} = HexagonTpu.predict(scale, [ok], quantize: :none)
    assert msg =~ "expected type {:u, 8}, got {:f, 32}"
  end

  test "output: :binary still returns binaries", %{add: add} do
    a = Nx.tensor([[1.0, 2.0, 3.0, 4.0]], type: {:f, 32})
    assert {:ok, [y]} = HexagonTpu.predict(add, [a, a], output: :binary)
    assert is_binary(y)
  end
end
