# Finds the shapes in the held-out frames of the shapes detector (models/shapes/), frames it
# never saw in training, through HexagonTpu.Vision.detect/3 on the reference backend, and
# scores what it found against the frames' truth:
#
#     mix run examples/detect.exs
#
# One detect/3 per frame: the frame (a PPM file, or raw NV12 bytes) is letterboxed into the
# model's input inside the NIF, the graph executes, its [1, 7, 64] head (Ultralytics' layout) is
# decoded with NMS there too; neither the input nor the head becomes an Elixir term. A
# detection is right when its box overlaps an object of its class by IoU >= 0.5 (each object
# counted once, best scores first). Exits with status 1 below the target: at least 90% of the
# objects found, at most one false detection for every five objects.

{:ok, _} = Application.ensure_all_started(:hexagon_tpu)

alias HexagonTpu.Vision
alias HexagonTpu.Vision.Frame

dir = Path.expand("../models/shapes", __DIR__)
labels = dir |> Path.join("labels.txt") |> File.read!() |> String.split("\n", trim: true)
model = HexagonTpu.load_model!(Path.join(dir, "shapes.bin"), backend: :reference)
# the thresholds the demo is scored with (models/shapes/README.md)
opts = [labels: labels, score: 0.25, iou: 0.5, stats: true]

# truth.txt: file format width height class label x1 y1 x2 y2, a line per object
truth =
  Path.join(dir, "truth.txt")
  |> File.read!()
  |> String.split("\n", trim: true)
  |> Enum.reject(&String.starts_with?(&1, "#"))
  |> Enum.map(fn line ->
    [file, format, w, h, class, _label | box] = String.split(line)
    number = fn s -> s |> Float.parse() |> elem(0) end

    {{file, format, String.to_integer(w), String.to_integer(h)},
     {String.to_integer(class), Enum.map(box, number)}}
  end)
  |> Enum.group_by(&elem(&1, 0), &elem(&1, 1))
  |> Enum.sort()

frame_of = fn {file, format, w, h} ->
  path = Path.join([dir, "frames", file])

  case format do
    "rgb24" -> Frame.read_ppm(path)
    "nv12" -> Frame.new(File.read!(path), w, h, :nv12)
  end
end

iou = fn [ax1, ay1, ax2, ay2], [bx1, by1, bx2, by2] ->
  iw = max(0.0, min(ax2, bx2) - max(ax1, bx1))
  ih = max(0.0, min(ay2, by2) - max(ay1, by1))
  inter = iw * ih
  union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
  if union > 0, do: inter / union, else: 0.0
end

# greedy, best score first: a detection takes the not yet matched object of its class it
# overlaps most, when that overlap is >= 0.5
score = fn dets, objects ->
  {hits, _left} =
    dets
    |> Enum.sort_by(& &1.score, :desc)
    |> Enum.reduce({0, Enum.with_index(objects)}, fn d, {hits, left} ->
      best =
        left
        |> Enum.filter(fn {{c, _}, _} -> c == d.class end)
        |> Enum.max_by(fn {{_, b}, _} -> iou.(d.box, b) end, fn -> nil end)

      case best do
        {{_, b}, _} = hit ->
          if iou.(d.box, b) >= 0.5, do: {hits + 1, List.delete(left, hit)}, else: {hits, left}

        nil ->
          {hits, left}
      end
    end)

  {hits, length(dets) - hits}
end

results =
  for {{file, format, w, h} = key, objects} <- truth do
    {:ok, frame} = frame_of.(key)
    {:ok, dets, stats} = Vision.detect(model, frame, opts)
    {found, false_dets} = score.(dets, objects)

    names =
      Enum.map_join(dets, ", ", &"#{&1.label} #{:erlang.float_to_binary(&1.score, decimals: 2)}")

    :io.format("~-24s ~-5s ~3wx~-3w  objects ~w  found ~w  false ~w   ~s~n", [
      file,
      format,
      w,
      h,
      length(objects),
      found,
      false_dets,
      names
    ])

    {length(objects), found, false_dets, stats}
  end

{objects, found, false_dets} =
  Enum.reduce(results, {0, 0, 0}, fn {o, f, x, _}, {a, b, c} -> {a + o, b + f, c + x} end)

median = fn list -> list |> Enum.sort() |> Enum.at(div(length(list), 2)) end
us = fn key -> median.(Enum.map(results, fn {_, _, _, s} -> s[key] end)) / 1000 end

IO.puts(
  "\n#{length(results)} frames, #{objects} objects: #{found} found " <>
    "(#{:erlang.float_to_binary(100 * found / objects, decimals: 1)}%), #{false_dets} false detections"
)

:io.format("median per frame, microseconds: preprocess ~.1f  execute ~.1f  decode ~.1f~n", [
  us.(:preprocess_ns),
  us.(:execute_ns),
  us.(:decode_ns)
])

HexagonTpu.close(model)
HexagonTpu.Runtime.close_shared()

if found * 10 < objects * 9 or false_dets * 5 > objects do
  IO.puts("FAIL: the target is >= 90% of the objects found and <= 1 false detection per 5")
  System.halt(1)
else
  IO.puts("OK: >= 90% of the objects found, <= 1 false detection per 5 objects")
end
