defmodule HexagonTpu.PredictTest do
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Graph, Runtime, TensorInfo}

  setup_all do
    rt = Runtime.open!(backend: :reference)
    ctx = Context.load!(rt, {:binary, build!(mixed())})
    %{rt: rt, ctx: ctx}
  end

  defp graph(ctx, name), do: Graph.open!(ctx, graph: name)

  test "f32 in, f32 out (file, default shared runtime)" do
    path = build_file!(add_f32())
    {:ok, model} = HexagonTpu.load_model(path, backend: :reference)

    assert {:ok, [y]} =
             HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([10, 20, 30, 40])], output: :binary)

    assert from_f32(y) == [11.0, 22.0, 33.0, 44.0]

    assert HexagonTpu.predict!(model, [f32([0, 0, 0, 0]), f32([1, 1, 1, 1])], output: :binary) ==
             [f32([1, 1, 1, 1])]
  end

  test "loading from a binary, {:file, path} and {:binary, bytes} give the same model" do
    bin = build!(add_f32())
    path = build_file!(add_f32())

    for source <- [bin, {:binary, bin}, path, {:file, path}] do
      model = HexagonTpu.load_model!(source, backend: :reference)
      assert [%TensorInfo{name: "a"}, %TensorInfo{name: "b"}] = Graph.inputs(model)

      assert {:ok, [y]} =
               HexagonTpu.predict(model, [f32([1, 1, 1, 1]), f32([1, 2, 3, 4])], output: :binary)

      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      HexagonTpu.close(model)
    end
  end

  test "u8 per-tensor: f32 quantized in, dequantized out; native in and out" do
    model =
      HexagonTpu.load_model!({:binary, build!(two_graphs())},
        backend: :reference,
        graph: "scale_u8"
      )

    [x] = Graph.inputs(model)
    assert x.type == {:u, 8} and x.dtype == :u8 and x.shape == {1, 4} and x.byte_size == 4
    assert x.quantization == %{scale: x.quantization.scale, zero_point: 128}
    assert_in_delta x.quantization.scale, 0.1, 1.0e-7

    # x = [1,2,3,4] * s = [1,2,3,4] -> [1,4,9,16]; 16 saturates at (255 - 128) * 0.1
    assert {:ok, [y]} = HexagonTpu.predict(model, [f32([1, 2, 3, 4])], output: :binary)
    assert_close(from_f32(y), [1.0, 4.0, 9.0, 12.7])

    # native: q = 138 -> x = 1.0 -> y = 1 * [1,2,3,4] -> q = 128 + 10 * y
    assert {:ok, [<<138, 148, 158, 168>>]} =
             HexagonTpu.predict(model, [<<138, 138, 138, 138>>],
               quantize: :none,
               dequantize: :none,
               output: :binary
             )

    # native in, dequantized out
    assert {:ok, [y]} =
             HexagonTpu.predict(model, [<<138, 138, 138, 138>>], quantize: :none, output: :binary)

    assert_close(from_f32(y), [1.0, 2.0, 3.0, 4.0])
  end

  test "u8 with per-axis weights and an i32 bias (FullyConnected)", %{ctx: ctx} do
    g = graph(ctx, "fc_u8")
    # x = (q - 10) * 0.5 = [5, 2, 10]; w rows [1,0,0] and [1,0,-1]; b = [1, -2] -> [6, -7]
    assert {:ok, [<<26, 0>>]} =
             Graph.execute(g, [<<20, 14, 30>>],
               quantize: :none,
               dequantize: :none,
               output: :binary
             )

    assert {:ok, [y]} = Graph.execute(g, [f32([5, 2, 10])], output: :binary)
    assert_close(from_f32(y), [6.0, -0.5])
  end

  test "f16 in and out", %{ctx: ctx} do
    g = graph(ctx, "relu_f16")

    assert [%TensorInfo{type: {:f, 16}, dtype: :f16, byte_size: 8, quantization: nil}] =
             Graph.inputs(g)

    assert {:ok, [q]} = Graph.execute(g, [f32([-1.5, 0.5, 2.0, -3.0])], output: :binary)
    assert from_f32(q) == [0.0, 0.5, 2.0, 0.0]
    # native f16: -1.5 = 0xBE00, 0.5 = 0x3800, 2.0 = 0x4000
    native = <<0xBE00::16-native, 0x3800::16-native, 0x4000::16-native, 0xBE00::16-native>>

    assert {:ok, [<<0::16, 0x3800::16-native, 0x4000::16-native, 0::16>>]} =
             Graph.execute(g, [native], quantize: :none, dequantize: :none, output: :binary)
  end

  test "i8 per-tensor with a negative zero point", %{ctx: ctx} do
    g = graph(ctx, "relu_i8")
    assert [%TensorInfo{type: {:s, 8}, quantization: %{zero_point: -5}}] = Graph.outputs(g)
    assert {:ok, [n]} = Graph.execute(g, [f32([-1.0, -0.2, 0.3, 2.0])], output: :binary)
    assert_close(from_f32(n), [0.0, 0.0, 0.3, 2.0])

    assert {:ok, [<<-5::signed-8, -5::signed-8, -2::signed-8, 15::signed-8>>]} =
             Graph.execute(g, [f32([-1.0, -0.2, 0.3, 2.0])], dequantize: :none, output: :binary)
  end

  test "u16 and i16 per-tensor", %{ctx: ctx} do
    g = graph(ctx, "add_u16")
    assert [%TensorInfo{type: {:u, 16}, byte_size: 8}, _] = Graph.inputs(g)
    a = f32([1.0, -2.0, 3.5, 0.0])
    b = f32([0.5, 1.0, -1.0, 0.3])
    assert {:ok, [y]} = Graph.execute(g, [a, b], output: :binary)
    assert_close(from_f32(y), [1.5, -1.0, 2.5, 0.3], 1.0e-4)
    assert {:ok, [native]} = Graph.execute(g, [a, b], dequantize: :none, output: :binary)
    assert for(<<q::unsigned-16-native <- native>>, do: q) == [575, 450, 625, 515]

    g16 = graph(ctx, "relu_i16")
    assert {:ok, [y]} = Graph.execute(g16, [f32([-0.5, 0.25, 1.0])], output: :binary)
    assert_close(from_f32(y), [0.0, 0.25, 1.0], 1.0e-5)
  end

  test "per-axis input tensor info and quantization", %{ctx: ctx} do
    g = graph(ctx, "per_axis_in")

    assert [%TensorInfo{quantization: %{axis: 0, scales: [0.5, 0.25], zero_points: [1, 2]}}] =
             Graph.inputs(g)

    # row 0: (q - 1) * 0.5, row 1: (q - 2) * 0.25
    assert {:ok, [y]} = Graph.execute(g, [<<3, 0, 1, 6, 2, 1>>], quantize: :none, output: :binary)
    assert from_f32(y) == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert {:ok, [y]} = Graph.execute(g, [f32([1.0, -1.0, 0.5, 1.0, 0.25, 2.0])], output: :binary)
    assert from_f32(y) == [1.0, 0.0, 0.5, 1.0, 0.25, 2.0]
  end

  test "several outputs come back in graph-output order", %{ctx: ctx} do
    g = graph(ctx, "two_out")
    assert {:ok, [s, p]} = Graph.execute(g, [f32([1, 2]), f32([3, 4])], output: :binary)
    assert {from_f32(s), from_f32(p)} == {[4.0, 6.0], [3.0, 8.0]}
  end

  test "several graphs of one context, listed with their tensors", %{ctx: ctx} do
    assert Context.graph_names(ctx) ==
             ~w(fc_u8 relu_f16 relu_i8 add_u16 relu_i16 two_out per_axis_in)

    assert %{name: "fc_u8", inputs: [%TensorInfo{name: "x"}], outputs: [%TensorInfo{name: "y"}]} =
             hd(Context.graphs(ctx))

    graphs = for name <- Context.graph_names(ctx), do: graph(ctx, name)
    assert Enum.all?(graphs, &match?(%Graph{}, &1))
    assert {:ok, [_]} = Graph.execute(Enum.at(graphs, 2), [f32([1, 2, 3, 4])], output: :binary)
    assert {:ok, [_]} = Graph.execute(Enum.at(graphs, 1), [f32([1, 2, 3, 4])], output: :binary)
  end

  test "runtime and context info", %{rt: rt, ctx: ctx} do
    info = Runtime.info(rt)
    assert info.provider_name =~ "REFERENCE"
    assert info.backend_lib =~ "libhtpu_refbackend.so"
    assert is_tuple(info.core_api_version)
    assert %{graphs: [_ | _], build_id: _, soc_version: _} = Context.info(ctx)
  end

  # backend: :reference brings the reference system library with it; an explicit
  # :system_library still wins (here one that does not exist, named in the error).
  test "backend: :reference implies the reference system library", %{rt: rt} do
    assert Runtime.info(rt).system_lib == Runtime.priv_path("libhtpu_refsystem.so")

    missing = Path.join(System.tmp_dir!(), "no-such-dir/libQnnSystem.so")

    assert {:error, %HexagonTpu.Error{message: message}} =
             Runtime.open(backend: :reference, system_library: missing)

    assert message =~ missing
  end

  test "stats: true returns the C timings" do
    model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)

    assert {:ok, [_], %{execute_ns: e, total_ns: t, nif_ns: n}} =
             HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([1, 2, 3, 4])],
               stats: true,
               output: :binary
             )

    assert e > 0 and t >= e and n >= t
  end
end
