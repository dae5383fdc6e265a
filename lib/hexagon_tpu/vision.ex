defmodule HexagonTpu.Vision do
  @moduledoc """
  From camera frames to detections, the work around the NPU done in C: a frame
  (`HexagonTpu.Vision.Frame`) is letterboxed straight into the model's input, in its own
  layout, type and quantization, and the detector's outputs are decoded in their own type into
  boxes in frame pixels. Guide: [docs/vision.md](docs/vision.md).

      {:ok, model} = HexagonTpu.load_model("yolo11n.bin")
      {:ok, frame} = HexagonTpu.Vision.Frame.new(nv12, 1920, 1080, :nv12)
      {:ok, detections} = HexagonTpu.Vision.detect(model, frame, labels: coco_names)
      # [%{class: 0, label: "person", score: 0.91, box: [x1, y1, x2, y2], keypoints: nil}, ...]

  `detect/3` does frame -> input -> execute -> detections in one NIF call on a dirty IO
  scheduler: neither the input nor the outputs become Erlang terms (with `io:` a
  `HexagonTpu.SharedIO` of the model, the input is written into FastRPC memory the DSP reads
  without a copy). `preprocess/3` and `detections/3` are the two halves, for pipelines that run
  the model themselves (`HexagonTpu.predict/3` with `quantize: :none, dequantize: :none`).

  ## Preprocess options (`preprocess/3`, `detect/3`)

    * `:resize` - `:letterbox` (default: aspect kept, centred, padded, exactly Ultralytics'
      `LetterBox`), `:stretch` (both axes to the input), `:crop` (the largest centred part of
      the input's aspect: classification)
    * `:pad` - the letterbox border value, 0..255 (default 114)
    * `:scaleup` - letterbox: enlarge frames smaller than the input (default `true`)
    * `:channels` - `:rgb` (default; Ultralytics, AI Hub) or `:bgr`: what the model takes
    * `:layout` - `:auto` (default: from the input's shape), `:nhwc` or `:nchw`
    * `:normalize` - `:auto` (default: pixel / 255 for float and quantized inputs, the pixel
      value for plain integers), `:unit`, `:raw` or `{mean, std}` (`(pixel / 255 - mean) / std`
      per channel, lists of 3 numbers: torchvision's convention)
    * `:input` - the image input's index or name (default 0)

  Sampling is OpenCV's `INTER_LINEAR` on u8 (equal to `cv2.resize` on Debian's OpenCV 4.6),
  then the normalized value is quantized with the input's scale and zero point.

  ## Decode options (`detections/3`, `detect/3`)

    * `:head` - `:auto` (default: three outputs are AI Hub's boxes, scores and classes; one is
      an Ultralytics head), `:ultralytics` (`[1, 4 + nc, A]`), `:ultralytics_pose`
      (`[1, 4 + nc + K * kd, A]`) or `:aihub`
    * `:head_layout` - `:auto` (default: the smaller axis holds the values of an anchor),
      `:channels_first` or `:anchors_first`
    * `:score` - a prediction counts when its score is above this (0..1, default 0.25),
      compared in the output's quantized domain
    * `:iou` - NMS drops a box overlapping a better one of its class by more than this
      (default 0.7, Ultralytics' predict)
    * `:max` - detections at most (default 300); `:max_candidates` - the best this many go to
      NMS (default 30000)
    * `:agnostic` - one NMS across classes (default `false`)
    * `:classes` - the class count, when the shape cannot tell it (a pose head: 1 by default);
      with AI Hub's class output, an id at or past it is an error (without it any id is kept)
    * `:keypoints`, `:keypoint_dims` - a pose head's keypoints (default: from the shape) and
      their values, 2 or 3 (default 3: x, y, visibility)
    * `:box_mapping` - how boxes and keypoints go back to frame pixels: `:letterbox`
      (default: through the padding the letterbox applied, its exact inverse) or
      `:ultralytics` (as Ultralytics' predict: `scale_boxes` recomputes the padding from the
      gain, `round((640 - w * gain) / 2 - 0.1)`, one pixel off the letterbox's for some frame
      sizes; keypoints as `scale_coords`, unrounded)
    * `:labels` - a list of names, one per class, for the detections' `:label` (a class id
      past the list has a `nil` label). Default: the class names the model carries (an
      Ultralytics export's `names` metadata, in an ONNX EPContext model:
      `HexagonTpu.Context.info/1`'s `source.class_names`), else none; `[]` for none
    * `:output` - `:maps` (default) or `:tensor`: one Nx tensor `{n, 6 + K * kd}` of rows
      `x1, y1, x2, y2, score, class` and the keypoints (needs Nx)

  A detection is `%{class: integer, label: String.t() | nil, score: float, box: [x1, y1, x2,
  y2], keypoints: nil | [[x, y, visibility], ...]}`, best first, boxes and keypoints in frame
  pixels clipped to the frame (or its crop).
  """

  alias HexagonTpu.{Error, Graph, NIF, SharedIO}
  alias HexagonTpu.Vision.{Frame, Options}

  # Nx is optional: only `output: :tensor` (and Nx outputs given to detections/3) call it.
  @compile {:no_warn_undefined, [Nx]}

  @typedoc "Where the frame went in the input: what maps the model's coordinates back."
  @type geometry :: %{
          frame_width: pos_integer(),
          frame_height: pos_integer(),
          region: {non_neg_integer(), non_neg_integer(), pos_integer(), pos_integer()},
          input_width: pos_integer(),
          input_height: pos_integer(),
          resized_width: pos_integer(),
          resized_height: pos_integer(),
          pad_left: non_neg_integer(),
          pad_top: non_neg_integer(),
          pad_right: non_neg_integer(),
          pad_bottom: non_neg_integer(),
          scale_x: float(),
          scale_y: float()
        }

  @type detection :: %{
          class: non_neg_integer(),
          label: String.t() | nil,
          score: float(),
          box: [float()],
          keypoints: [[float()]] | nil
        }

  @doc """
  Writes `frame` into the model's image input: `{:ok, input, geometry}`, `input` a binary in
  the input's own type (pass it to `HexagonTpu.predict/3` with `quantize: :none`), or an Nx
  tensor of the input's shape with `output: :nx`.

  ## Options

  The preprocess options of the module doc, and `:output`: `:binary` (default) or `:nx`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, frame} = HexagonTpu.Vision.Frame.new(<<0::size(96)>>, 2, 2, :rgb24)
      iex> {:error, error} = HexagonTpu.Vision.preprocess(model, frame)
      iex> error.message
      "input 'a' has rank 2; an image input is [1, H, W, C], [1, C, H, W] or the same without the batch"
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec preprocess(Graph.t(), Frame.t(), keyword()) ::
          {:ok, binary() | struct(), geometry()} | {:error, Error.t()}
  def preprocess(model, frame, opts \\ []) do
    where = "HexagonTpu.Vision.preprocess/3"
    out_spec = %{output: {{:one_of, [:binary, :nx]}, ":binary or :nx", :binary}}

    with :ok <- model?(model, where),
         :ok <- Frame.check(frame, where),
         {:ok, o} <- Options.validate(opts, [Options.pre_spec(), out_spec], where),
         {:ok, pre} <- Options.pre_map(model, o, where),
         {:ok, input, geometry, _scheduler} <-
           Error.wrap(NIF.vision_preprocess(model.ref, frame_map(frame), pre)) do
      if o.output == :nx do
        info = Enum.at(model.inputs, pre.input)

        with {:ok, t} <- HexagonTpu.NxTensors.output(input, info, info.dtype, model.name),
             do: {:ok, t, geometry}
      else
        {:ok, input, geometry}
      end
    end
  end

  @doc """
  Like `preprocess/3`, raising `HexagonTpu.Error`; returns `{input, geometry}`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> frame = %HexagonTpu.Vision.Frame{data: <<0::size(96)>>, width: 2, height: 2, format: :rgb24}
      iex> HexagonTpu.Vision.preprocess!(model, frame, resize: :zoom)
      ** (HexagonTpu.Error) invalid_option: HexagonTpu.Vision.preprocess/3: expected :resize to be :letterbox, :stretch or :crop, got :zoom
  """
  @spec preprocess!(Graph.t(), Frame.t(), keyword()) :: {binary() | struct(), geometry()}
  def preprocess!(model, frame, opts \\ []) do
    case preprocess(model, frame, opts) do
      {:ok, input, geometry} -> {input, geometry}
      {:error, e} -> raise e
    end
  end

  @doc """
  Decodes the model's outputs, each in its own type (binaries as `HexagonTpu.predict/3`
  returns them with `dequantize: :none, output: :binary`, or Nx tensors), into detections:
  `{:ok, detections}`. An output with a dynamic dimension is taken as `predict/3` returns it,
  cut to the rows the execute produced (`detect/3` reads that shape from the execute itself).

  ## Options

  The decode options of the module doc, and `:geometry`: what `preprocess/3` returned (boxes
  are mapped back to frame pixels and clipped); without it they stay in the input's pixels.
  A geometry made by hand is checked field by field (every field of `t:geometry/0`, of its
  type and range) and then as a whole (the region inside the frame, the padding inside the
  input): `{:error, %HexagonTpu.Error{}}` names the field and what it expects.

  ## Examples

  The outputs are checked against the head named (`add_f32` has one output of `[1, 4]`):

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:error, error} = HexagonTpu.Vision.detections(model, [<<0::size(128)>>], head: :ultralytics)
      iex> error.message
      "output 'y' [1, 4] has 1 values per anchor (read channels_first from the smaller axis; name the head layout if the other holds an anchor's values); the ultralytics head needs 4 box values and at least 1 class score"
  """
  @spec detections(Graph.t(), [binary() | struct()], keyword()) ::
          {:ok, [detection()] | struct()} | {:error, Error.t()}
  def detections(model, outputs, opts \\ []) do
    where = "HexagonTpu.Vision.detections/3"
    geo_spec = %{geometry: {fn _ -> true end, "", nil}}

    with :ok <- model?(model, where),
         {:ok, o} <- Options.validate(opts, [Options.dec_spec(), geo_spec], where),
         {:ok, geometry} <- Options.geometry(o.geometry, where),
         {:ok, kind} <- Options.kind(o, where),
         {:ok, bins} <- output_binaries(model, outputs, where),
         {:ok, dets, _candidates, _scheduler} <-
           Error.wrap(
             NIF.vision_decode(
               model.ref,
               bins,
               Options.dec_map(o),
               geometry,
               Options.labels(o, model),
               kind
             )
           ) do
      {:ok, answer(dets, kind)}
    end
  end

  @doc """
  Like `detections/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> HexagonTpu.Vision.detections!(model, [<<0::size(128)>>], iou: 2)
      ** (HexagonTpu.Error) invalid_option: HexagonTpu.Vision.detections/3: expected :iou to be a number in 0..1, got 2
  """
  @spec detections!(Graph.t(), [binary() | struct()], keyword()) :: [detection()] | struct()
  def detections!(model, outputs, opts \\ []),
    do: Error.unwrap!(detections(model, outputs, opts))

  @doc """
  Frame -> input -> execute -> detections in one call: `{:ok, detections}`, or with
  `stats: true` `{:ok, detections, stats}` (`:preprocess_ns`, `:execute_ns` (graphExecute),
  `:decode_ns`, `:total_ns` (the C section), `:candidates`, `:geometry`). Emits the
  `[:hexagon_tpu, :execute, ...]` telemetry events as `HexagonTpu.predict/3` does.

  ## Options

  The preprocess and decode options of the module doc, and:

    * `:io` - a `HexagonTpu.SharedIO` of the model (`HexagonTpu.alloc_io/1`): the input is
      written into it and the outputs decoded from it, FastRPC memory the DSP reads and
      writes without copies. One call at a time per `SharedIO`: a second `detect/3` on it
      while one runs returns `{:error, %HexagonTpu.Error{reason: :busy}}` at once
    * `:timeout`, `:priority`, `:perf_profile` - as `HexagonTpu.predict/3`'s
    * `:stats` - `true` returns the figures above

  ## Examples

  The model must have one image input (`add_f32` has two of `[1, 4]`):

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, frame} = HexagonTpu.Vision.Frame.new(<<0::size(96)>>, 2, 2, :rgb24)
      iex> {:error, error} = HexagonTpu.Vision.detect(model, frame)
      iex> error.message
      "detect runs a graph of one image input and at most 8 outputs; this one has 2 input(s) and 1 output(s)"
  """
  @spec detect(Graph.t(), Frame.t(), keyword()) ::
          {:ok, [detection()] | struct()}
          | {:ok, [detection()] | struct(), map()}
          | {:error, Error.t()}
  def detect(model, frame, opts \\ []) do
    where = "HexagonTpu.Vision.detect/3"

    with :ok <- model?(model, where),
         :ok <- Frame.check(frame, where),
         {:ok, o} <- Options.validate_detect(opts, where),
         {:ok, kind} <- Options.kind(o, where),
         {:ok, pre} <- Options.pre_map(model, o, where),
         :ok <- io_of(model, o.io, where) do
      shared = if o.io, do: o.io.ref, else: nil

      HexagonTpu.Telemetry.execute_span(model.name, fn ->
        answer =
          NIF.vision_detect(
            model.ref,
            frame_map(frame),
            pre,
            Options.dec_map(o),
            Options.call_map(model, o),
            shared,
            Options.labels(o, model),
            kind
          )

        case Error.wrap(answer) do
          {:ok, dets, stats} ->
            {if(o.stats, do: {:ok, answer(dets, kind), stats}, else: {:ok, answer(dets, kind)}),
             stats}

          error ->
            {error, nil}
        end
      end)
    end
  end

  @doc """
  Like `detect/3`, raising `HexagonTpu.Error`; `{detections, stats}` with `stats: true`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> HexagonTpu.Vision.detect!(model, :not_a_frame)
      ** (HexagonTpu.Error) invalid_argument: HexagonTpu.Vision.detect/3: expected a %HexagonTpu.Vision.Frame{}, got :not_a_frame
  """
  @spec detect!(Graph.t(), Frame.t(), keyword()) ::
          [detection()] | struct() | {list() | struct(), map()}
  def detect!(model, frame, opts \\ []) do
    case detect(model, frame, opts) do
      {:ok, dets} -> dets
      {:ok, dets, stats} -> {dets, stats}
      {:error, e} -> raise e
    end
  end

  # ---- helpers --------------------------------------------------------------------------------

  defp model?(%Graph{}, _where), do: :ok

  defp model?(other, where),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{where}: expected a model (%HexagonTpu.Graph{}), got #{inspect(other, limit: 5)}"
       )}

  defp frame_map(%Frame{} = f),
    do: %{
      data: f.data,
      width: f.width,
      height: f.height,
      format: f.format,
      stride: f.stride,
      uv_offset: f.uv_offset,
      crop: f.crop
    }

  defp io_of(_model, nil, _where), do: :ok

  defp io_of(model, %SharedIO{graph: name}, where) do
    if name == model.name,
      do: :ok,
      else:
        {:error,
         Error.new(
           :invalid_argument,
           "#{where}: the SharedIO was allocated for graph '#{name}', not '#{model.name}'"
         )}
  end

  defp output_binaries(model, outputs, where) when is_list(outputs) do
    cond do
      not Options.proper_list?(outputs) ->
        {:error,
         Error.new(
           :invalid_argument,
           "#{where}: expected a list of outputs, got an improper list " <>
             inspect(outputs, limit: 5)
         )}

      length(outputs) != length(model.outputs) ->
        {:error,
         Error.new(
           :mismatch,
           "#{where}: graph '#{model.name}' has #{length(model.outputs)} output(s), got #{length(outputs)}"
         )}

      true ->
        bins =
          Enum.map(outputs, fn
            b when is_binary(b) -> b
            %{__struct__: Nx.Tensor} = t -> Nx.to_binary(t)
            other -> {:bad, other}
          end)

        case Enum.find_index(bins, &(not is_binary(&1))) do
          nil ->
            {:ok, bins}

          i ->
            {:bad, other} = Enum.at(bins, i)
            name = Enum.at(model.outputs, i).name

            {:error,
             Error.new(
               :invalid_argument,
               "#{where}: output #{i} ('#{name}'): expected a binary (the output in its own " <>
                 "type) or an Nx tensor, got #{inspect(other, limit: 5)}"
             )}
        end
    end
  end

  defp output_binaries(_model, outputs, where),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{where}: expected a list of outputs, got #{inspect(outputs, limit: 5)}"
       )}

  defp answer(dets, :maps), do: dets

  defp answer({rows, n, cols}, :rows),
    do: rows |> Nx.from_binary({:f, 32}) |> Nx.reshape({n, cols})
end
