defmodule HexagonTpu.Vision.Options do
  # HexagonTpu.Vision's options: checked (HexagonTpu.Options' "expected ..., got ..." errors)
  # and turned into the maps c_src/vision.c reads.
  @moduledoc false

  alias HexagonTpu.{Error, Graph, Options, Runtime}
  alias HexagonTpu.Graph.CallOptions

  @max_u32 4_294_967_295

  @pre_spec %{
    input: {&__MODULE__.input?/1, "an input index or name", 0},
    resize:
      {{:one_of, [:letterbox, :stretch, :crop]}, ":letterbox, :stretch or :crop", :letterbox},
    pad: {{:integer_in, 0, 255}, "a pixel value 0..255", 114},
    scaleup: {:boolean, "a boolean", true},
    channels: {{:one_of, [:rgb, :bgr]}, ":rgb or :bgr", :rgb},
    layout: {{:one_of, [:auto, :nhwc, :nchw]}, ":auto, :nhwc or :nchw", :auto},
    normalize:
      {&__MODULE__.normalize?/1,
       ":auto, :unit, :raw or {mean, std} (lists of 3 numbers, std > 0)", :auto}
  }

  @dec_spec %{
    head:
      {{:one_of, [:auto, :ultralytics, :ultralytics_pose, :aihub]},
       ":auto, :ultralytics, :ultralytics_pose or :aihub", :auto},
    head_layout:
      {{:one_of, [:auto, :channels_first, :anchors_first]},
       ":auto, :channels_first or :anchors_first", :auto},
    score: {&__MODULE__.unit?/1, "a number in 0..1", 0.25},
    iou: {&__MODULE__.unit?/1, "a number in 0..1", 0.7},
    max: {{:integer_in, 1, 100_000}, "an integer in 1..100000", 300},
    max_candidates: {{:integer_in, 1, @max_u32}, "a positive integer", 30_000},
    classes: {&__MODULE__.count_or_nil?/1, "nil or a positive integer", nil},
    keypoints: {&__MODULE__.count_or_nil?/1, "nil or a positive integer", nil},
    keypoint_dims: {{:one_of, [2, 3]}, "2 or 3", 3},
    agnostic: {:boolean, "a boolean", false},
    box_mapping:
      {{:one_of, [:letterbox, :ultralytics]}, ":letterbox or :ultralytics", :letterbox},
    labels: {&__MODULE__.labels?/1, "nil or a list of strings (a label per class)", nil},
    output: {{:one_of, [:maps, :tensor]}, ":maps or :tensor", :maps}
  }

  @call_spec %{
    io:
      {{:struct_or_nil, HexagonTpu.SharedIO}, "nil or a %HexagonTpu.SharedIO{} of the model", nil},
    stats: {:boolean, "a boolean", false},
    timeout: {&CallOptions.check_timeout/1, "", nil},
    priority: {{:one_of, CallOptions.priorities()}, CallOptions.priorities_expected(), nil},
    perf_profile:
      {{:one_of, Runtime.perf_profiles()},
       "one of " <> Enum.map_join(Runtime.perf_profiles(), ", ", &inspect/1), nil}
  }

  def pre_spec, do: @pre_spec
  def dec_spec, do: @dec_spec
  def call_spec, do: @call_spec

  @doc false
  def input?(v), do: (is_integer(v) and v >= 0) or (is_binary(v) and v != "")
  @doc false
  def number?(v), do: is_number(v) and v == v
  @doc false
  def unit?(v), do: is_number(v) and v >= 0 and v <= 1
  @doc false
  def count_or_nil?(v), do: is_nil(v) or (is_integer(v) and v > 0 and v <= @max_u32)
  @doc false
  def labels?(nil), do: true
  def labels?(v), do: strings?(v)

  # a proper list of strings: Enum.all?/2 raises on an improper one (["a" | "b"])
  defp strings?([]), do: true
  defp strings?([s | rest]) when is_binary(s), do: strings?(rest)
  defp strings?(_), do: false

  @doc "Whether `v` is a proper list (length/1 and Enum raise on [a | b])."
  def proper_list?([]), do: true
  def proper_list?([_ | rest]), do: proper_list?(rest)
  def proper_list?(_), do: false

  @doc false
  def normalize?(v) when v in [:auto, :unit, :raw], do: true

  def normalize?({mean, std}),
    do: triple?(mean, fn _ -> true end) and triple?(std, fn x -> x > 0 end)

  def normalize?(_), do: false

  defp triple?([_, _, _] = l, ok), do: Enum.all?(l, &(is_number(&1) and ok.(&1)))
  defp triple?(_, _), do: false

  # The union of the three specs and its defaults, made once and kept in a persistent term:
  # a module attribute holding function captures is rebuilt on every use (about 6 us here).
  defp detect_spec do
    case :persistent_term.get({__MODULE__, :detect_spec}, nil) do
      nil ->
        spec = @pre_spec |> Map.merge(@dec_spec) |> Map.merge(@call_spec)
        made = {spec, Map.new(spec, fn {k, {_, _, default}} -> {k, default} end)}
        :persistent_term.put({__MODULE__, :detect_spec}, made)
        made

      made ->
        made
    end
  end

  @doc """
  `validate/3` for detect/3's options (preprocess, decode and call), with the union of their
  specs and its defaults made once: only the options given are checked, on the path every
  frame takes. An unknown option or a non-keyword goes through the whole spec for its message.
  """
  @spec validate_detect(keyword(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate_detect(opts, where) when is_list(opts) do
    {spec, defaults} = detect_spec()

    known? = fn
      {k, _} when is_atom(k) -> Map.has_key?(spec, k)
      _ -> false
    end

    cond do
      opts == [] ->
        {:ok, defaults}

      Enum.all?(opts, known?) ->
        with {:ok, given} <- Options.validate(opts, Map.take(spec, Keyword.keys(opts)), where),
             do: {:ok, Map.merge(defaults, given)}

      true ->
        Options.validate(opts, spec, where)
    end
  end

  def validate_detect(opts, where), do: Options.validate(opts, elem(detect_spec(), 0), where)

  @doc "Checks `opts` against the union of `specs`; one map of every option's value."
  @spec validate(keyword(), [map()], String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate(opts, specs, where),
    do: Options.validate(opts, Enum.reduce(specs, &Map.merge/2), where)

  @doc "The preprocess options map of the NIF; the input's name resolved against the model."
  @spec pre_map(Graph.t(), map(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def pre_map(g, o, where) do
    with {:ok, index} <- input_index(g, o.input, where) do
      {norm, mean, std} =
        case o.normalize do
          {m, s} -> {:mean_std, floats(m), floats(s)}
          n -> {n, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]}
        end

      {:ok,
       %{
         input: index,
         resize: o.resize,
         pad_value: o.pad,
         scaleup: o.scaleup,
         bgr: o.channels == :bgr,
         layout: o.layout,
         normalize: norm,
         mean: mean,
         std: std
       }}
    end
  end

  defp floats(l), do: Enum.map(l, &(&1 * 1.0))

  defp input_index(g, i, where) when is_integer(i) do
    if i < length(g.inputs),
      do: {:ok, i},
      else: invalid("#{where}: input #{i}: the graph has #{length(g.inputs)} input(s)")
  end

  defp input_index(g, name, where) do
    case Enum.find_index(g.inputs, &(&1.name == name)) do
      nil ->
        names = Enum.map_join(g.inputs, ", ", &"'#{&1.name}'")
        invalid("#{where}: the graph has no input '#{name}' (its inputs: #{names})")

      i ->
        {:ok, i}
    end
  end

  @doc "The decode options map of the NIF."
  @spec dec_map(map()) :: map()
  def dec_map(o) do
    %{
      head: o.head,
      layout: o.head_layout,
      score: o.score * 1.0,
      iou: o.iou * 1.0,
      max: o.max,
      max_candidates: o.max_candidates,
      classes: o.classes || 0,
      keypoints: o.keypoints || 0,
      keypoint_dims: o.keypoint_dims,
      agnostic: o.agnostic,
      box_mapping: o.box_mapping
    }
  end

  @doc """
  The labels as the NIF takes them: a tuple (index = class), empty without labels. The
  `:labels` option's, else the class names of the model's metadata (an EPContext model's
  `names`: `HexagonTpu.Context.info/1`'s `source.class_names`), else none.
  """
  @spec labels(map(), Graph.t()) :: tuple()
  def labels(o, model), do: List.to_tuple(o.labels || class_names(model))

  defp class_names(%Graph{model_info: %{source: %{class_names: [_ | _] = names}}}), do: names
  defp class_names(_model), do: []

  @doc "The NIF's answer kind: :maps, or :rows for an Nx tensor (which needs Nx)."
  @spec kind(map(), String.t()) :: {:ok, :maps | :rows} | {:error, Error.t()}
  def kind(%{output: :maps}, _where), do: {:ok, :maps}

  def kind(%{output: :tensor}, where) do
    case HexagonTpu.NxTensors.output_kind(:nx, where) do
      {:ok, :nx} ->
        {:ok, :rows}

      {:error, %{reason: :invalid_option} = e} ->
        {:error,
         %{
           e
           | message:
               "#{where}: expected :output to be :maps (:tensor needs Nx, which is not " <>
                 "loaded), got :tensor"
         }}

      {:error, e} ->
        {:error, %{e | message: String.replace(e.message, "output: :binary", "output: :maps")}}
    end
  end

  @doc "The call options of the NIF (a graph_submit map: timeout, priority, perf profile)."
  @spec call_map(Graph.t(), map()) :: map()
  def call_map(g, o), do: CallOptions.submit_options(g, o)

  defp invalid(message), do: {:error, Error.new(:invalid_argument, message)}

  @max_side 65_535
  @sides "an integer in 1..#{@max_side}"
  @u32 "an integer in 0..#{@max_u32}"
  @scale "a number in 1/#{@max_side}..#{@max_side} (input pixels per frame pixel)"
  @geo_fields [
    frame_width: @sides,
    frame_height: @sides,
    region: "{x, y, width, height} of integers in 0..#{@max_u32}, width and height at least 1",
    input_width: @sides,
    input_height: @sides,
    resized_width: @u32,
    resized_height: @u32,
    pad_left: @u32,
    pad_top: @u32,
    pad_right: @u32,
    pad_bottom: @u32,
    scale_x: @scale,
    scale_y: @scale
  ]

  @doc """
  A caller's `:geometry` checked field by field: `{:ok, nil | geometry}` (scales as floats), or
  an error naming the field and what it expects. How the fields fit together (the region inside
  the frame, the padding inside the input) is checked by the C decode, whose error names it.
  """
  @spec geometry(term(), String.t()) :: {:ok, map() | nil} | {:error, Error.t()}
  def geometry(nil, _where), do: {:ok, nil}

  def geometry(g, where) when is_map(g) do
    bad =
      Enum.find(@geo_fields, fn {k, _} ->
        not (Map.has_key?(g, k) and geo_field?(k, Map.get(g, k)))
      end)

    case bad do
      nil ->
        {:ok, %{g | scale_x: g.scale_x * 1.0, scale_y: g.scale_y * 1.0}}

      {k, expected} ->
        got = if Map.has_key?(g, k), do: inspect(Map.get(g, k), limit: 5), else: "no #{k}"

        {:error,
         Error.new(
           :invalid_option,
           "#{where}: expected :geometry's #{k} to be #{expected} (the geometry " <>
             "preprocess/3 returned), got #{got}"
         )}
    end
  end

  def geometry(other, where),
    do:
      {:error,
       Error.new(
         :invalid_option,
         "#{where}: expected :geometry to be nil or the geometry map preprocess/3 returned, " <>
           "got #{inspect(other, limit: 5)}"
       )}

  defp geo_field?(:region, {x, y, w, h}),
    do: Enum.all?([x, y, w, h], &u32?/1) and w >= 1 and h >= 1

  defp geo_field?(:region, _), do: false
  defp geo_field?(k, v) when k in [:scale_x, :scale_y], do: scale?(v)

  defp geo_field?(k, v) when k in [:frame_width, :frame_height, :input_width, :input_height],
    do: is_integer(v) and v >= 1 and v <= @max_side

  defp geo_field?(_, v), do: u32?(v)

  defp u32?(v), do: is_integer(v) and v >= 0 and v <= @max_u32
  defp scale?(v), do: is_number(v) and v >= 1 / @max_side and v <= @max_side
end
