defmodule HexagonTpu.VisionNxTest do
  # HexagonTpu.Vision's Nx outputs: the input as a tensor of its shape, detections as one tensor
  # of rows. Runs only when Nx is present (reported as skipped, with the reason, otherwise).
  use ExUnit.Case, async: true

  @moduletag :nx
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)
  @compile {:no_warn_undefined, [Nx]}

  alias HexagonTpu.Vision
  alias HexagonTpu.Vision.Frame
  import HexagonTpu.TestModels

  # One FullyConnected of fixed outputs: a [1, 6, 4] f32 head (2 classes) whatever the input.
  @head [
    10,
    30,
    50,
    70,
    10,
    10,
    10,
    10,
    8,
    8,
    8,
    8,
    8,
    8,
    8,
    8,
    0.9,
    0.1,
    0.6,
    0.1,
    0.1,
    0.8,
    0.1,
    0.1
  ]
  setup_all do
    text = """
    graph heads
      input  images u8 [1,3,4,4] scale=0.00392156862745098
      native pixels u8 [1,48] scale=0.00392156862745098
      static w f32 [24,48] data=[#{Enum.join(List.duplicate(0.0, 24 * 48), ",")}]
      static b f32 [24] data=[#{Enum.join(@head, ",")}]
      native flat f32 [1,24]
      output output0 f32 [1,6,4]
      op Reshape images -> pixels
      op FullyConnected pixels w b -> flat
      op Reshape flat -> output0
    """

    model = HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)
    on_exit(fn -> HexagonTpu.close(model) end)
    %{model: model}
  end

  test "preprocess output: :nx gives the input's tensor (NCHW here)", %{model: m} do
    {:ok, f} = Frame.new(:binary.copy(<<255, 0, 0>>, 16), 4, 4, :rgb24)
    {:ok, t, geo} = Vision.preprocess(m, f, output: :nx)
    assert Nx.shape(t) == {1, 3, 4, 4}
    assert Nx.type(t) == {:u, 8}
    assert Nx.to_flat_list(t[0][0]) == List.duplicate(255, 16)
    assert Nx.to_flat_list(t[0][1]) == List.duplicate(0, 16)
    assert geo.resized_width == 4
  end

  test "detections as one tensor of rows: x1, y1, x2, y2, score, class", %{model: m} do
    {:ok, f} = Frame.new(:binary.copy(<<1, 2, 3>>, 16), 4, 4, :rgb24)
    {:ok, input, _geo} = Vision.preprocess(m, f, output: :nx)
    {:ok, [out]} = HexagonTpu.predict(m, [input], dequantize: :none)
    # without a geometry the boxes stay in input pixels, unclipped
    {:ok, t} = Vision.detections(m, [out], output: :tensor, head_layout: :channels_first)
    assert Nx.shape(t) == {3, 6}

    assert Nx.to_list(t) == [
             [6.0, 6.0, 14.0, 14.0, 0.8999999761581421, 0.0],
             [26.0, 6.0, 34.0, 14.0, 0.800000011920929, 1.0],
             [46.0, 6.0, 54.0, 14.0, 0.6000000238418579, 0.0]
           ]

    {:ok, t2} = Vision.detect(m, f, output: :tensor, head_layout: :channels_first)
    assert Nx.shape(t2) == {3, 6}
  end
end
