defmodule HexagonTpu.VisionEdgesTest do
  # HexagonTpu.Vision at its edges: frames whose sizes would wrap a size computation, class ids
  # past any label, where each half runs (the scheduler is a decision the NIF reports, never a
  # duration), pose heads with fewer anchors than values, outputs with a dynamic dimension, and
  # the messages of options that cannot be honoured. Each answer is checked against values
  # worked out here.
  use ExUnit.Case, async: true

  alias HexagonTpu.{NIF, Vision}
  alias HexagonTpu.Vision.{Frame, Options}
  import HexagonTpu.TestModels

  defp model!(text), do: HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)

  # [1, 8, 8, 3] u8 in, a [1, 7, 4] f32 head out (a fixed one: only its shape matters here)
  @small """
  graph small
    input  images u8 [1,8,8,3] scale=0.00392156862745098
    native pixels u8 [1,192] scale=0.00392156862745098
    static w f32 [28,192] data=[#{Enum.join(List.duplicate(0.0, 28 * 192), ",")}]
    static b f32 [28] data=[#{Enum.join(List.duplicate(0.0, 28), ",")}]
    native flat f32 [1,28]
    output output0 f32 [1,7,4]
    op Reshape images -> pixels
    op FullyConnected pixels w b -> flat
    op Reshape flat -> output0
  """

  describe "sizes that would wrap" do
    setup do
      %{m: model!(@small)}
    end

    test "a frame of 2^31 x 2^31 is refused by preprocess and detect, naming the limit",
         %{m: m} do
      f = %Frame{
        data: <<7::size(128)>>,
        width: 2_147_483_648,
        height: 2_147_483_648,
        format: :rgba
      }

      msg = "frame: 2147483648x2147483648 is larger than 65535 pixels on a side"
      assert {:error, e} = Vision.preprocess(m, f)
      assert e.reason == :invalid_argument and e.message =~ msg
      assert {:error, e} = Vision.detect(m, f)
      assert e.message =~ msg
      assert {:error, e} = Vision.detect(m, %{f | width: 65_535, height: 65_535, stride: 0})

      assert e.message =~
               "frame: 65535x65535 rgba with a stride of 262140 needs 17179344900 bytes, got 16"
    end

    test "an NV12 UV plane offset past the data is refused", %{m: m} do
      {:ok, f} = Frame.new(<<16, 16, 16, 16, 128, 128>>, 2, 2, :nv12, uv_offset: 4_294_967_295)
      assert {:error, e} = Vision.preprocess(m, f)
      assert e.message =~ "the nv12 UV plane offset 4294967295 is past the frame's 6 bytes"
      assert {:ok, _, _} = Vision.preprocess(m, %{f | uv_offset: 4})
    end
  end

  describe "AI Hub class ids" do
    # three outputs as AI Hub's: boxes [1, 2, 4], scores [1, 2], classes [1, 2] (f32 here)
    setup do
      text = """
      graph aihub
        input a f32 [1,2,4]
        input s f32 [1,2]
        input c f32 [1,2]
        output boxes f32 [1,2,4]
        output scores f32 [1,2]
        output class_idx f32 [1,2]
        op Relu a -> boxes
        op Relu s -> scores
        op Relu c -> class_idx
      """

      %{m: model!(text)}
    end

    test "an id of 3e9 has no label (not a read past the labels); ids in range have theirs",
         %{m: m} do
      boxes = f32([0, 0, 10, 10, 20, 20, 40, 40])
      scores = f32([0.9, 0.8])
      classes = f32([3.0e9, 1])
      {:ok, dets} = Vision.detections(m, [boxes, scores, classes], labels: ["a", "b"])
      assert [%{class: 3_000_000_000, label: nil}, %{class: 1, label: "b"}] = dets
      # the largest id a u32 holds, and one past the labels
      classes = f32([4_294_967_040, 2])
      {:ok, dets} = Vision.detections(m, [boxes, scores, classes], labels: ["a", "b"])
      assert [%{class: 4_294_967_040, label: nil}, %{class: 2, label: nil}] = dets
      # a letterbox of 100x62 into 640x640 (r = 6.4): the image starts at row 121, where
      # Ultralytics' scale_boxes takes round((640 - 62 * 6.4) / 2 - 0.1) = 122
      geo = %{
        frame_width: 100,
        frame_height: 62,
        region: {0, 0, 100, 62},
        input_width: 640,
        input_height: 640,
        resized_width: 640,
        resized_height: 397,
        pad_left: 0,
        pad_top: 121,
        pad_right: 0,
        pad_bottom: 122,
        scale_x: 6.4,
        scale_y: 6.4
      }

      y = 121 + 6.4 * 10
      two = f32([64, y, 128, y + 64, 0, 0, 0, 0])
      {:ok, [d]} = Vision.detections(m, [two, f32([0.9, 0]), f32([0, 0])], geometry: geo)
      assert d.box == [10.0, 10.0, 20.0, 20.0]

      {:ok, [u]} =
        Vision.detections(m, [two, f32([0.9, 0]), f32([0, 0])],
          geometry: geo,
          box_mapping: :ultralytics
        )

      assert u.box == [10.0, 9.84375, 20.0, 19.84375]
      # with a class count the model's ids are checked against it
      assert {:error, e} = Vision.detections(m, [boxes, scores, classes], classes: 2)
      assert e.message =~ "anchor 0 has class 4.29497e+09; expected a class id 0..1"
    end
  end

  describe "where preprocess and decode run" do
    defp dec_map(opts) do
      {:ok, o} = Options.validate(opts, [Options.dec_spec()], "test")
      Options.dec_map(o)
    end

    defp decode_ran_on(m, bins, opts) do
      {:ok, _dets, _cands, where} = NIF.vision_decode(m.ref, bins, dec_map(opts), nil, {}, :maps)
      where
    end

    test "a head of 8400 anchors goes to a dirty scheduler though it is only 42 KB" do
      m =
        model!("""
        graph head5
          input x u8 [1,5,8400] scale=0.00392156862745098
          output y u8 [1,5,8400] scale=0.00392156862745098
          op Reshape x -> y
        """)

      # every anchor a candidate: 8400 boxes for NMS
      head = :binary.copy(<<200>>, 5 * 8400)
      assert decode_ran_on(m, [head], head_layout: :channels_first) == :dirty_cpu
      # (all of one box and class: NMS keeps the first)
      {:ok, dets} = Vision.detections(m, [head], head_layout: :channels_first, max: 5)
      assert [%{class: 0, box: [box | _]}] = dets
      assert_in_delta box, 200 / 255 * 0.5, 1.0e-6
    end

    test "a 64,000-byte head with max: 100_000 goes to a dirty scheduler" do
      m =
        model!("""
        graph head8
          input x u8 [1,8,8000] scale=0.00392156862745098
          output y u8 [1,8,8000] scale=0.00392156862745098
          op Reshape x -> y
        """)

      head = :binary.copy(<<0>>, 8 * 8000)
      assert decode_ran_on(m, [head], max: 100_000) == :dirty_cpu
    end

    test "a small head stays on the normal scheduler", %{} do
      m = model!(@small)
      head = f32(List.duplicate(0.0, 28))
      assert decode_ran_on(m, [head], head_layout: :channels_first) == :normal
    end

    test "a 30 KB frame into a 640x640 f32 input goes to a dirty scheduler; 8x8 u8 does not" do
      big =
        model!("""
        graph f32in
          input images f32 [1,640,640,3]
          output y f32 [1,640,640,3]
          op Relu images -> y
        """)

      o = %{
        input: 0,
        resize: :letterbox,
        pad: 114,
        scaleup: true,
        channels: :rgb,
        layout: :auto,
        normalize: :auto
      }

      # 160 x 64 RGB24 (30,720 bytes): 640 x 256 in the input, 192 rows of border above
      {:ok, f} = Frame.new(:binary.copy(<<90, 20, 30>>, 160 * 64), 160, 64, :rgb24)
      {:ok, pre} = Options.pre_map(big, o, "test")
      assert {:ok, input, geo, :dirty_cpu} = NIF.vision_preprocess(big.ref, frame_map(f), pre)
      assert geo.pad_top == 192
      <<border::binary-size(4), _::binary>> = input
      assert border == <<114 / 255::float-32-native>>

      small = model!(@small)
      {:ok, pre} = Options.pre_map(small, o, "test")
      {:ok, f8} = Frame.new(:binary.copy(<<1, 2, 3>>, 64), 8, 8, :rgb24)
      assert {:ok, _, _, :normal} = NIF.vision_preprocess(small.ref, frame_map(f8), pre)
    end

    defp frame_map(f),
      do:
        Map.take(Map.from_struct(f), [:data, :width, :height, :format, :stride, :uv_offset, :crop])
  end

  describe "pose heads" do
    test "[1, 56, 20] channels first: more values than anchors" do
      m =
        model!("""
        graph pose20
          input x f32 [1,56,20]
          output y f32 [1,56,20]
          op Relu x -> y
        """)

      # anchor 7: a box at (30, 40) of 10 x 20, score 0.9, keypoint k at (k, 2k) visibility 0.5
      kp = for k <- 0..16, v <- [k * 1.0, 2.0 * k, 0.5], do: v
      column = [30.0, 40.0, 10.0, 20.0, 0.9] ++ kp
      values = for c <- 0..55, a <- 0..19, do: if(a == 7, do: Enum.at(column, c), else: 0.0)

      {:ok, [d]} =
        Vision.detections(m, [f32(values)], head: :ultralytics_pose, head_layout: :channels_first)

      assert d.box == [25.0, 30.0, 35.0, 50.0]
      assert_in_delta d.score, 0.9, 1.0e-6
      assert length(d.keypoints) == 17
      assert Enum.at(d.keypoints, 16) == [16.0, 32.0, 0.5]
    end
  end

  describe "outputs with a dynamic dimension" do
    # The input's nonzero elements as rows [0, 0, y, x, c] (NonZero of the [1, 1, 4, 4, 3]
    # input): read as an anchors-first head, each row a box (cx 0, cy 0, w y, h x) of class 0
    # scoring c, so every nonzero element of channel 1 or 2 is a detection.
    @nz """
    graph nzdet
      input images u8 [1,4,4,3] scale=0.00392156862745098
      native deep u8 [1,1,4,4,3] scale=0.00392156862745098
      output idx i32 [48,5] dynamic=[0]
      op Reshape images -> deep
      op NonZero deep -> idx
    """

    # what the frame's nonzero pixels of channel 1 and 2 must decode to, best first: score c,
    # then the row (anchor) order, which is row-major
    defp expected(pixels) do
      rows =
        for {v, i} <- Enum.with_index(pixels),
            v != 0,
            do: {div(i, 12), rem(div(i, 3), 4), rem(i, 3)}

      rows
      |> Enum.with_index()
      |> Enum.filter(fn {{_y, _x, c}, _a} -> c >= 1 end)
      |> Enum.sort_by(fn {{_y, _x, c}, a} -> {-c, a} end)
      # (cx 0, cy 0, w y, h x), mapped through the 1:1 geometry: clipped to the 4x4 frame
      |> Enum.map(fn {{y, x, c}, _a} -> {c * 1.0, [0.0, 0.0, y / 2, x / 2]} end)
    end

    defp got(dets), do: Enum.map(dets, &{&1.score, &1.box})

    test "detect decodes what each execute produced, not the buffer's earlier rows" do
      m = model!(@nz)
      opts = [head_layout: :anchors_first, score: 0.5, iou: 1.0]
      full = List.duplicate(255, 48)
      one = List.replace_at(List.duplicate(0, 48), 1 * 12 + 2 * 3 + 2, 7)

      for pixels <- [full, one, full, List.duplicate(0, 48), one] do
        {:ok, f} = Frame.new(:binary.list_to_bin(pixels), 4, 4, :rgb24)
        {:ok, dets} = Vision.detect(m, f, [resize: :stretch] ++ opts)
        assert got(dets) == expected(pixels)
        # the two halves: predict cuts the output to its rows, detections/3 reads them so
        {:ok, input, geo} = Vision.preprocess(m, f, resize: :stretch)

        {:ok, [out]} =
          HexagonTpu.predict(m, [input], quantize: :none, dequantize: :none, output: :binary)

        assert byte_size(out) == 20 * length(for p <- pixels, p != 0, do: p)
        assert {:ok, ^dets} = Vision.detections(m, [out], [geometry: geo] ++ opts)
      end
    end

    test "a binary that is not whole rows of the dynamic dimension is refused" do
      m = model!(@nz)

      assert {:error, e} =
               Vision.detections(m, [<<0::size(8 * 30)>>], head_layout: :anchors_first)

      assert e.message =~
               "output 'idx': expected at most 960 bytes (i32, its own type), whole rows of its dynamic dimension, got 30"
    end
  end

  describe "messages" do
    test "output: :tensor without Nx names :tensor and :maps" do
      if not Code.ensure_loaded?(Nx) do
        m = model!(@small)
        head = f32(List.duplicate(0.0, 28))
        assert {:error, e} = Vision.detections(m, [head], output: :tensor)

        assert e.message ==
                 "HexagonTpu.Vision.detections/3: expected :output to be :maps (:tensor needs " <>
                   "Nx, which is not loaded), got :tensor"
      end
    end
  end
end
