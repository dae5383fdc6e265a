defmodule HexagonTpu.VisionTest do
  # HexagonTpu.Vision through the NIF, on a detector made of the reference backend's ops: its
  # head is planted by a bias, and one score follows the frame (the mean of its red channel),
  # so the answer shows the frame went into the input. The arithmetic itself is checked against
  # OpenCV and NumPy by test/vision/oracle.py.
  use ExUnit.Case, async: true

  alias HexagonTpu.{SharedIO, Vision}
  alias HexagonTpu.Vision.Frame
  import HexagonTpu.TestModels

  # [1, 8, 8, 3] u8 (scale 1/255) -> Reshape, FullyConnected -> [1, 7, 4] f32: 4 anchors of cx, cy, w,
  # h and 3 class scores, in an 8x8 input. Anchor 0: a box at (2, 2, 4, 4) whose class-0 score
  # is the frame's mean red (/ 255); anchors 1 and 2 overlap (class 1, scores 0.9 and 0.8);
  # anchor 3 is class 2 at 0.3, its box reaching out of the input.
  @bias [
    2,
    4,
    4,
    7,
    2,
    4,
    4.5,
    8,
    4,
    4,
    4,
    4,
    4,
    4,
    4,
    4,
    0,
    0.1,
    0.1,
    0.1,
    0.1,
    0.9,
    0.8,
    0.1,
    0.1,
    0.1,
    0.1,
    0.3
  ]
  defp detector_text do
    weights =
      for row <- 0..27, k <- 0..191 do
        # row 16 is anchor 0's class-0 score; input element k is (pixel, channel) = (k / 3, k % 3)
        if row == 16 and rem(k, 3) == 0, do: 1 / 64, else: 0.0
      end

    """
    graph detector
      input  images u8 [1,8,8,3] scale=0.00392156862745098
      static w f32 [28,192] data=[#{Enum.join(weights, ",")}]
      static b f32 [28] data=[#{Enum.join(@bias, ",")}]
      native pixels u8 [1,192] scale=0.00392156862745098
      native flat f32 [1,28]
      output output0 f32 [1,7,4]
      op Reshape images -> pixels
      op FullyConnected pixels w b -> flat
      op Reshape flat -> output0
    """
  end

  setup_all do
    path = build_file!(detector_text(), "detector.bin")
    model = HexagonTpu.load_model!(path, backend: :reference)
    on_exit(fn -> HexagonTpu.close(model) end)
    %{model: model, path: path}
  end

  # A 16x8 frame (twice the input's width): letterboxed to 8x4 with 2 rows above and below.
  defp frame(red, format \\ :rgb24) do
    px = <<red, 10, 20>>
    data = :binary.copy(px, 16 * 8)

    case format do
      :rgb24 -> Frame.new(data, 16, 8, :rgb24)
      :bgr24 -> Frame.new(:binary.copy(<<20, 10, red>>, 16 * 8), 16, 8, :bgr24)
    end
  end

  test "detect: frame -> input -> execute -> detections, boxes in frame pixels", %{model: m} do
    {:ok, f} = frame(255)

    {:ok, dets} =
      Vision.detect(m, f, labels: ["cat", "dog", "bird"], head_layout: :channels_first)

    # best first: anchor 1 (class 1, 0.9); anchor 0, whose score is the letterboxed input's
    # mean red: 4 of 8 rows are the frame (255), the rest the border (114); anchor 3 (0.3).
    # Anchor 2 (0.8) overlaps anchor 1 by IoU 14 / 18 > 0.7: suppressed.
    [d1, d0, d3] = dets
    assert %{class: 1, label: "dog", keypoints: nil} = d1
    assert_in_delta d1.score, 0.9, 1.0e-6
    assert %{class: 0, label: "cat"} = d0
    assert_in_delta d0.score, (255 * 32 + 114 * 32) / 64 / 255, 1.0e-6
    assert %{class: 2, label: "bird"} = d3
    # input pixels -> frame pixels: x / 0.5, (y - 2) / 0.5, clipped to the 16x8 frame
    assert_close(d1.box, [4.0, 0.0, 12.0, 8.0])
    assert_close(d0.box, [0.0, 0.0, 8.0, 4.0])
    assert_close(d3.box, [10.0, 8.0, 16.0, 8.0])
  end

  test "an EPContext model's class names are the default labels; :labels wins", ctx do
    # the detector in an ONNX EPContext model, with the names an Ultralytics export writes
    onnx = Path.join(tmp_dir!(), "detector_#{System.unique_integer([:positive])}.onnx")
    writer = Path.expand("../support/epcontext.py", __DIR__)
    names = "names={0: 'cat', 1: 'dog', 2: 'bird'}"
    args = [writer, onnx, "--node", "detector_ctx", "--embed", ctx.path, "--prop", names]
    {out, status} = System.cmd("python3", args, stderr_to_stdout: true)
    assert status == 0, out

    m = HexagonTpu.load_model!(onnx, backend: :reference)
    assert m.model_info.source.class_names == ["cat", "dog", "bird"]
    {:ok, f} = frame(255)
    opts = [head_layout: :channels_first]
    labels = fn {:ok, dets} -> Enum.map(dets, & &1.label) end

    # best first: classes 1, 0, 2 (see the first test)
    assert labels.(Vision.detect(m, f, opts)) == ["dog", "cat", "bird"]
    {:ok, input, geo} = Vision.preprocess(m, f)

    {:ok, outs} =
      HexagonTpu.predict(m, [input], quantize: :none, dequantize: :none, output: :binary)

    assert labels.(Vision.detections(m, outs, [geometry: geo] ++ opts)) == ["dog", "cat", "bird"]
    assert labels.(Vision.detect(m, f, [labels: ["a"]] ++ opts)) == [nil, "a", nil]
    assert labels.(Vision.detect(m, f, [labels: []] ++ opts)) == [nil, nil, nil]
    # a raw context binary carries no names
    assert labels.(Vision.detect(ctx.model, f, opts)) == [nil, nil, nil]
    HexagonTpu.close(m)
  end

  test "the frame's channel order reaches the model", %{model: m} do
    {:ok, rgb} = frame(0)
    {:ok, bgr} = frame(0, :bgr24)
    opts = [head_layout: :channels_first, score: 0.05]
    {:ok, a} = Vision.detect(m, rgb, opts)
    {:ok, b} = Vision.detect(m, bgr, opts)
    assert Enum.find(a, &(&1.class == 0)).score == Enum.find(b, &(&1.class == 0)).score
    # the model asked for B, G, R: its "red" is the frame's blue (20)
    {:ok, c} = Vision.detect(m, rgb, [channels: :bgr] ++ opts)
    assert_in_delta Enum.find(c, &(&1.class == 0)).score, (20 * 32 + 114 * 32) / 64 / 255, 1.0e-6
  end

  test "preprocess + predict + detections equal detect", %{model: m} do
    {:ok, f} = frame(200)
    {:ok, input, geo} = Vision.preprocess(m, f)
    assert byte_size(input) == 8 * 8 * 3
    assert geo.pad_top == 2 and geo.resized_height == 4 and geo.scale_x == 0.5

    {:ok, outs} =
      HexagonTpu.predict(m, [input], quantize: :none, dequantize: :none, output: :binary)

    opts = [geometry: geo, head_layout: :channels_first, labels: ["a", "b", "c"]]
    {:ok, dets} = Vision.detections(m, outs, opts)

    {:ok, direct, stats} =
      Vision.detect(m, f, head_layout: :channels_first, labels: ["a", "b", "c"], stats: true)

    assert dets == direct
    assert stats.geometry == geo
    assert stats.candidates == 4
    assert stats.preprocess_ns > 0 and stats.decode_ns > 0 and stats.total_ns >= stats.execute_ns
  end

  test "a hand-made :geometry is checked field by field, never a badarg", %{model: m} do
    {:ok, f} = frame(200)
    {:ok, input, geo} = Vision.preprocess(m, f)

    {:ok, outs} =
      HexagonTpu.predict(m, [input], quantize: :none, dequantize: :none, output: :binary)

    dec = fn g -> Vision.detections(m, outs, geometry: g, head_layout: :channels_first) end
    assert {:ok, _} = dec.(geo)
    # integer scales are numbers too: as their floats
    {:ok, want} = dec.(%{geo | scale_x: 1.0, scale_y: 1.0})
    assert {:ok, ^want} = dec.(%{geo | scale_x: 1, scale_y: 1})

    bad = [
      {%{region: {-5, 0, 10, 10}, scale_x: 1.0, scale_y: 1.0}, "frame_width", "no frame_width"},
      {%{geo | region: {-5, 0, 10, 10}}, "region to be {x, y, width, height}", "{-5, 0, 10, 10}"},
      {%{geo | region: {0, 0, 0, 4}}, "width and height at least 1", "{0, 0, 0, 4}"},
      {%{geo | pad_left: 1.5}, "pad_left to be an integer in 0..4294967295", "got 1.5"},
      {%{geo | pad_top: 4_294_967_296}, "pad_top to be an integer", "got 4294967296"},
      {%{geo | scale_x: 0.0}, "scale_x to be a number in 1/65535..65535", "got 0.0"},
      {%{geo | scale_y: 1.0e300}, "scale_y to be a number", "got 1.0e300"},
      {%{geo | input_width: 0}, "input_width to be an integer in 1..65535", "got 0"},
      {%{geo | frame_height: "8"}, "frame_height to be an integer in 1..65535", ~s(got "8")}
    ]

    for {g, expected, got} <- bad do
      assert {:error, %HexagonTpu.Error{reason: :invalid_option} = e} = dec.(g)
      assert e.message =~ "HexagonTpu.Vision.detections/3: expected :geometry's "
      assert e.message =~ expected
      assert e.message =~ got
    end

    assert {:error, e} = dec.([1, 2])
    assert e.message =~ "expected :geometry to be nil or the geometry map preprocess/3 returned"
    # fields of the right types that do not fit together: the C decode says which
    assert {:error, e} = dec.(%{geo | pad_left: 4_000_000_000})
    assert e.message =~ "pad_left + resized_width + pad_right"
    assert {:error, e} = dec.(%{geo | region: {10, 0, 16, 8}})
    assert e.message =~ "expected a non-empty rectangle inside the frame"
  end

  test ":labels and outputs as improper lists, :score outside 0..1", %{model: m} do
    out = <<0::size(8 * 112)>>
    assert {:error, e} = Vision.detections(m, [out], labels: ["a" | "b"])
    assert e.message =~ "expected :labels to be nil or a list of strings"
    assert {:error, e} = Vision.detections(m, [out | out])
    assert e.message =~ "expected a list of outputs, got an improper list"

    for s <- [-0.5, 1.5, 1.0e9] do
      assert {:error, %HexagonTpu.Error{reason: :invalid_option} = e} =
               Vision.detections(m, [out], score: s)

      assert e.message =~ "expected :score to be a number in 0..1, got #{inspect(s)}"
    end
  end

  test "detect into a SharedIO", %{model: m} do
    {:ok, io} = HexagonTpu.alloc_io(m)
    {:ok, f} = frame(255)
    opts = [head_layout: :channels_first]
    assert {:ok, Vision.detect!(m, f, opts)} == Vision.detect(m, f, [io: io] ++ opts)
    :ok = SharedIO.close(io)
    assert {:error, %{reason: :closed}} = Vision.detect(m, f, [io: io] ++ opts)
  end

  test "bad frames and options are errors naming what was wrong", %{model: m} do
    {:ok, f} = frame(1)
    short = %{f | data: binary_part(f.data, 0, 100)}
    assert {:error, e} = Vision.detect(m, short)
    assert e.message =~ "frame: 16x8 rgb24 with a stride of 48 needs 384 bytes, got 100"
    assert {:error, e} = Vision.detect(m, %{f | stride: 40})

    assert e.message =~
             "stride 40 is smaller than a row of 16 rgb24 pixels (48 bytes): expected 0 " <>
               "(rows packed) or at least 48"

    assert {:error, e} = Vision.detect(m, %{f | crop: {10, 0, 10, 8}})

    assert e.message =~
             "crop 10x8 at (10, 0) is outside the 16x8 frame: expected x + width <= 16 and " <>
               "y + height <= 8"

    # the head read by its smaller axis: the message says so, and how to name the other
    assert {:error, e} = Vision.detect(m, f)

    assert e.message ==
             "output 'output0' [1, 7, 4] has 4 values per anchor (read anchors_first from the " <>
               "smaller axis; name the head layout if the other holds an anchor's values); the " <>
               "ultralytics head needs 4 box values and at least 1 class score"

    assert {:error, e} = Vision.detect(m, f, head_layout: :channels_first, classes: 2)

    assert e.message =~
             "has 7 values per anchor (read channels_first, the layout given); the " <>
               "ultralytics head needs 4 box values and 2 class scores (the class count " <>
               "given): 6 values"

    assert {:error, e} = Vision.detections(m, [:head])

    assert e.message ==
             "HexagonTpu.Vision.detections/3: output 0 ('output0'): expected a binary (the " <>
               "output in its own type) or an Nx tensor, got :head"

    assert {:error, e} = Vision.detect(m, f, resize: :zoom)
    assert e.message =~ "expected :resize to be :letterbox, :stretch or :crop, got :zoom"
    assert {:error, e} = Vision.detect(m, f, head: :ultralytics_pose)
    assert e.message =~ "the pose head needs 4 box values"
    assert {:error, e} = Vision.detect(m, f, normalize: {[0, 0, 0], [1, 0, 1]})
    assert e.message =~ "expected :normalize to be"
    assert {:error, e} = Vision.detect(m, %{f | format: :i420})
    assert e.message =~ "expected :format to be one of :rgb24"
    assert {:error, e} = Vision.detections(m, [<<0::32>>])
    assert e.message =~ "output 'output0': expected 112 bytes (f32, its own type), got 4"
    assert {:error, e} = Vision.preprocess(m, f, input: "pixels")
    assert e.message =~ "the graph has no input 'pixels' (its inputs: 'images')"
    assert {:error, e} = Vision.detect(m, f, zoom: 2)
    assert e.message =~ "unknown option :zoom (known options: :agnostic, "
    assert {:error, e} = Vision.detect(m, f, [{"score", 0.5}])
    assert e.message =~ "expected options to be a keyword list"
    assert {:error, e} = Vision.detect(m, f, :fast)
    assert e.message =~ "expected options to be a keyword list, got :fast"
    # the options given are checked, the rest take their defaults
    assert {:ok, _} = Vision.detect(m, f, score: 0.9, iou: 0.5, head_layout: :channels_first)

    assert {:ok, [], _} =
             Vision.detect(m, f, score: 1.0, stats: true, head_layout: :channels_first)
  end

  test "Frame.from_ppm reads binary PPM and PGM" do
    {:ok, f} = Frame.from_ppm("P5 3 2 255\n" <> <<1, 2, 3, 4, 5, 6>>)
    assert {f.width, f.height, f.format, f.data} == {3, 2, :gray8, <<1, 2, 3, 4, 5, 6>>}
    assert {:error, e} = Frame.from_ppm("P3\n1 1\n255\n0 0 0")
    assert e.message =~ "not a binary PPM (P6) or PGM (P5)"
    assert {:error, e} = Frame.from_ppm("P6\n1 1\n65535\n" <> <<0::48>>)
    assert e.message =~ "only 8-bit images"
  end
end
