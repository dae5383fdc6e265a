defmodule HexagonTpu.SubmitLargeTest do
  # The core converts a submitted call's f32 inputs at submit, on the caller's thread: a large
  # input must not hold a normal scheduler for that conversion (c_src/submit.c moves such a
  # submit to a dirty CPU scheduler), and the answer is the same either way.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels

  # u8 in and out, so f32 inputs are quantized at submit; 65,536 elements = 256 KiB of f32.
  @model """
  graph big
    input x u8 [1,65536] scale=0.5 zero_point=0
    output y u8 [1,65536] scale=0.5 zero_point=0
    op Relu x -> y
  graph small
    input x u8 [1,16] scale=0.5 zero_point=0
    output y u8 [1,16] scale=0.5 zero_point=0
    op Relu x -> y
  """

  defp floats(bin), do: for(<<v::float-32-native <- bin>>, do: v)
  defp dirty_submits, do: HexagonTpu.stats().submits_dirty_cpu

  test "a large submit converts on a dirty CPU scheduler, a small one on the caller's" do
    bin = build!(@model)
    {:ok, big} = HexagonTpu.load_model({:binary, bin}, backend: :reference, graph: "big")
    {:ok, small} = HexagonTpu.load_model({:binary, bin}, backend: :reference, graph: "small")
    values = for i <- 0..65_535, do: rem(i, 200) * 0.5
    before = dirty_submits()
    {:ok, call} = HexagonTpu.predict_async(big, [f32(values)], output: :binary)
    assert {:ok, [y]} = HexagonTpu.await(call, 10_000)
    assert floats(y) == values
    assert dirty_submits() - before >= 1

    small_values = for i <- 0..15, do: i * 0.5
    before = dirty_submits()
    {:ok, call} = HexagonTpu.predict_async(small, [f32(small_values)], output: :binary)
    assert {:ok, [y]} = HexagonTpu.await(call, 10_000)
    assert floats(y) == small_values
    assert dirty_submits() - before == 0
    :ok = HexagonTpu.close(big)
    :ok = HexagonTpu.close(small)
  end
end
