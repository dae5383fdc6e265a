defmodule HexagonTpu.BatchMultipleTest do
  use ExUnit.Case, async: true

  # HexagonTpu.predict_batch/3 on a graph that takes a batch multiple (QnnGraph.h: the batch
  # dimension of every tensor an integer multiple of the graph's): one execute for the whole
  # batch instead of one per chunk; on a graph that refuses (the reference format's
  # batch_multiple=no), one per chunk, the refusal remembered. The oracle is predict/3 row by row.

  import HexagonTpu.TestModels
  alias HexagonTpu.Error

  @dir Path.expand("../../models/digits", __DIR__)

  # The digits model (batch 1, u8 [1,64] -> u8 [1,10]) with its graph line replaced.
  defp digits(graph_line) do
    text =
      @dir
      |> Path.join("digits.txt")
      |> File.read!()
      |> String.replace("graph digits\n", graph_line <> "\n", global: false)

    HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)
  end

  # 64 different held-out digits, f32 pixels
  defp digit_rows(n) do
    <<x::binary-size(n * 256), _::binary>> = File.read!(Path.join(@dir, "test_x.f32"))
    x
  end

  defp per_row(model, x) do
    for <<row::binary-size(256) <- x>>, into: <<>> do
      {:ok, [y]} = HexagonTpu.predict(model, [row], output: :binary)
      y
    end
  end

  test "64 digits rows: one execute with batch multiple, the same results as per-row predict" do
    model = digits("graph digits")
    x = digit_rows(64)
    want = per_row(model, x)
    # the rows are not interchangeable: most results differ from each other
    assert want |> :binary.bin_to_list() |> Enum.chunk_every(40) |> Enum.uniq() |> length() > 32

    before = HexagonTpu.stats()
    assert {:ok, [y], stats} = HexagonTpu.predict_batch(model, [x], output: :binary, stats: true)
    assert y == want
    assert stats.chunks == 64
    assert stats.executes == 1
    assert HexagonTpu.stats().batch_multiple_executes - before.batch_multiple_executes >= 1

    # native u8 in and out too
    xq = for <<v::float-32-native <- x>>, into: <<>>, do: <<round(v * 16)>>

    assert {:ok, [yq], %{executes: 1}} =
             HexagonTpu.predict_batch(model, [xq],
               quantize: :none,
               dequantize: :none,
               output: :binary,
               stats: true
             )

    assert byte_size(yq) == 640
    HexagonTpu.close(model)
  end

  test "a graph that refuses: 64 chunked executes, the refusal remembered, same results" do
    model = digits("graph digits batch_multiple=no")
    x = digit_rows(64)
    want = per_row(model, x)
    before = HexagonTpu.stats()

    assert {:ok, [y], %{executes: 65, chunks: 64}} =
             HexagonTpu.predict_batch(model, [x], output: :binary, stats: true)

    assert y == want
    assert HexagonTpu.stats().batch_multiple_refusals - before.batch_multiple_refusals >= 1

    # remembered: straight to the chunks
    assert {:ok, [^want], %{executes: 64}} =
             HexagonTpu.predict_batch(model, [x], output: :binary, stats: true)

    HexagonTpu.close(model)
  end

  test "a batch that is not a multiple of the graph's: the padded last chunk, one execute" do
    model =
      HexagonTpu.load_model!({:binary, build!(batch_models())},
        backend: :reference,
        graph: "add_b4"
      )

    for n <- [5, 11, 13] do
      a = for r <- 0..(n - 1), c <- 0..2, do: r * 10.0 + c
      b = for r <- 0..(n - 1), c <- 0..2, do: -3.0 * r + c / 4

      assert {:ok, [y], stats} =
               HexagonTpu.predict_batch(model, [f32(a), f32(b)], output: :binary, stats: true)

      assert from_f32(y) == Enum.zip_with(a, b, &(&1 + &2)), "#{n} rows"
      assert stats.chunks == div(n + 3, 4)
      assert stats.executes == 1
    end

    HexagonTpu.close(model)
  end

  test "an error in a chunked batch names its chunk; a conversion error its rows" do
    model = digits("graph digits batch_multiple=no")
    x = digit_rows(8)
    nan = <<0x7FC00000::32-native>>
    # row 5, element 3
    <<head::binary-size(5 * 256 + 12), _::binary-size(4), tail::binary>> = x
    bad = head <> nan <> tail

    assert {:error, %Error{reason: :nan, message: msg}} = HexagonTpu.predict_batch(model, [bad])
    assert msg =~ "chunk 5 of 8: rows 5..5 of 8"

    # the same on a graph that takes the multiple: the conversion of that row fails
    takes = digits("graph digits")
    assert {:error, %Error{reason: :nan, message: msg}} = HexagonTpu.predict_batch(takes, [bad])
    assert msg =~ "chunk 5 of 8: rows 5..5 of 8"
    assert {:ok, [_]} = HexagonTpu.predict_batch(takes, [x])
    HexagonTpu.close(takes)
    HexagonTpu.close(model)
  end
end
