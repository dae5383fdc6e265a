defmodule HexagonTpu.InputCheckTest do
  # The one input check every caller uses (Graph.execute/3, predict_batch/3, SharedIO, the
  # Serving's requests): same checks, same wording, the caller's prefix.
  use ExUnit.Case, async: true

  alias HexagonTpu.{Error, InputCheck, TensorInfo}

  @u8 %TensorInfo{
    name: "x",
    type: {:u, 8},
    dtype: :u8,
    shape: {2, 3},
    num_elements: 6,
    byte_size: 6
  }

  @f32 %TensorInfo{
    name: "y",
    type: {:f, 32},
    dtype: :f32,
    shape: {2, 3},
    num_elements: 6,
    byte_size: 24
  }

  defp f32(n), do: :binary.copy(<<1.0::float-32-native>>, n)

  test "the list: not a list, improper, wrong count; the caller's prefix" do
    one = %InputCheck{graph: "g"}
    batch = %InputCheck{graph: "g", where: "HexagonTpu.predict_batch/3", rows: 2}

    assert {:error, %Error{reason: :invalid_argument, message: m}} =
             InputCheck.list(one, [@u8], :nope)

    assert m == "graph 'g': expected a list of inputs, got :nope"

    assert {:error, %Error{reason: :invalid_argument, message: m}} =
             InputCheck.list(batch, [@u8], [1 | 2])

    assert m =~ "HexagonTpu.predict_batch/3: graph 'g': expected a proper list of inputs"

    assert {:error, %Error{reason: :mismatch, message: m}} =
             InputCheck.list(one, [@u8, @f32], [<<>>])

    assert m == "graph 'g' expects 2 input(s) (x, y), got 1"
    assert {:ok, [<<>>]} = InputCheck.list(one, [@u8], [<<>>])
  end

  test "one binary: its size in the type quantize says, with the own-type hint" do
    auto = %InputCheck{graph: "g"}
    none = %InputCheck{graph: "g", quantize: :none}
    bin = f32(6)

    assert {:ok, ^bin, :f32, nil} = InputCheck.input(auto, @u8, 0, bin)

    assert {:ok, <<1, 2, 3, 4, 5, 6>>, :u8, nil} =
             InputCheck.input(none, @u8, 0, <<1, 2, 3, 4, 5, 6>>)

    assert {:error, %Error{reason: :mismatch, tensor: "x", message: m}} =
             InputCheck.input(auto, @u8, 1, <<0::48>>)

    assert m ==
             "graph 'g' input 'x' (1): expected 24 bytes (6 f32 elements of shape {2, 3}), " <>
               "got 6: the size of u8 data; pass quantize: :none for data in the tensor's own type"

    assert {:error, %Error{message: m}} = InputCheck.input(none, @u8, 0, <<0::40>>)
    assert m == "graph 'g' input 'x' (0): expected 6 bytes (6 u8 elements of shape {2, 3}), got 5"

    assert {:error, %Error{message: m}} = InputCheck.input(auto, @u8, 0, 42)
    assert m == "graph 'g' input 'x' (0): expected an Nx tensor or a binary, got 42"
  end

  test "rows: whole rows of the graph's batch, and every input the same rows" do
    check = %InputCheck{graph: "g", where: "HexagonTpu.Serving", rows: 2}

    # a graph of batch 2: a row is 3 elements
    assert {:ok, _, :f32, 5} = InputCheck.input(check, @f32, 0, f32(15))

    assert {:error, %Error{message: m}} = InputCheck.input(check, @f32, 0, f32(4))

    assert m ==
             "HexagonTpu.Serving: graph 'g' input 'y' (0): expected a whole number (>= 1) of " <>
               "rows of 12 bytes (3 f32 elements each: shape {n, 3} (n >= 1 rows of the " <>
               "graph's {2, 3})), got 16 bytes"

    assert {:ok, 4} = InputCheck.same_rows(check, [@u8, @f32], [4, 4])

    assert {:error, %Error{reason: :mismatch, message: m}} =
             InputCheck.same_rows(check, [@u8, @f32], [4, 5])

    assert m ==
             "HexagonTpu.Serving: graph 'g': the inputs have different numbers of rows: " <>
               "'x' 4, 'y' 5"
  end
end
