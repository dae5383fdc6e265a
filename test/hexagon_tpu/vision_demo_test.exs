defmodule HexagonTpu.VisionDemoTest do
  # The shapes detector (models/shapes/) on its held-out frames through detect/3: the figures
  # examples/detect.exs prints and models/shapes/meta.json records (the reference backend is
  # exact, so they are equalities), and the same detections with the frame's input in a
  # SharedIO and through preprocess + predict + detections.
  use ExUnit.Case, async: true

  alias HexagonTpu.Vision
  alias HexagonTpu.Vision.Frame

  @dir Path.expand("../../models/shapes", __DIR__)
  @opts [score: 0.25, iou: 0.5]

  setup_all do
    model = HexagonTpu.load_model!(Path.join(@dir, "shapes.bin"), backend: :reference)
    labels = @dir |> Path.join("labels.txt") |> File.read!() |> String.split("\n", trim: true)
    on_exit(fn -> HexagonTpu.close(model) end)
    %{model: model, labels: labels, truth: truth()}
  end

  defp truth do
    Path.join(@dir, "truth.txt")
    |> File.read!()
    |> String.split("\n", trim: true)
    |> Enum.reject(&String.starts_with?(&1, "#"))
    |> Enum.map(fn line ->
      [file, format, w, h, class, _label | box] = String.split(line)

      {{file, format, String.to_integer(w), String.to_integer(h)},
       {String.to_integer(class), Enum.map(box, &String.to_float/1)}}
    end)
    |> Enum.group_by(&elem(&1, 0), &elem(&1, 1))
    |> Enum.sort()
  end

  defp frame({file, "rgb24", _, _}), do: Frame.read_ppm(Path.join([@dir, "frames", file]))

  defp frame({file, "nv12", w, h}),
    do: Frame.new(File.read!(Path.join([@dir, "frames", file])), w, h, :nv12)

  defp iou([a1, b1, c1, d1], [a2, b2, c2, d2]) do
    inter = max(0.0, min(c1, c2) - max(a1, a2)) * max(0.0, min(d1, d2) - max(b1, b2))
    inter / ((c1 - a1) * (d1 - b1) + (c2 - a2) * (d2 - b2) - inter)
  end

  # objects found (IoU >= 0.5, same class, each once, best scores first) and false detections
  defp score(dets, objects) do
    {hits, _} =
      Enum.reduce(dets, {0, objects}, fn d, {hits, left} ->
        case Enum.find(left, fn {c, b} -> c == d.class and iou(d.box, b) >= 0.5 end) do
          nil -> {hits, left}
          hit -> {hits + 1, List.delete(left, hit)}
        end
      end)

    {hits, length(dets) - hits}
  end

  defp expected(key) do
    meta = File.read!(Path.join(@dir, "meta.json"))
    [_, n] = Regex.run(~r/"#{key}": (\d+)/, meta)
    String.to_integer(n)
  end

  test "detect/3 finds what meta.json says on the held-out frames", %{model: m, truth: truth} do
    {found, false_dets, objects} =
      Enum.reduce(truth, {0, 0, 0}, fn {key, objs}, {f, x, n} ->
        {:ok, fr} = frame(key)
        {:ok, dets} = Vision.detect(m, fr, @opts)
        {hits, bad} = score(dets, objs)
        {f + hits, x + bad, n + length(objs)}
      end)

    assert objects == expected("objects")
    assert found == expected("found_expected")
    assert false_dets == expected("false_expected")
    # the demo's target (examples/detect.exs)
    assert found * 10 >= objects * 9 and false_dets * 5 <= objects
  end

  test "the same detections in a SharedIO and through the two halves", %{model: m, labels: l} do
    {:ok, io} = HexagonTpu.alloc_io(m)
    on_exit(fn -> HexagonTpu.SharedIO.close(io) end)

    for {key, _} <- Enum.take(truth(), 4) do
      {:ok, fr} = frame(key)
      {:ok, dets} = Vision.detect(m, fr, [labels: l] ++ @opts)
      assert {:ok, ^dets} = Vision.detect(m, fr, [labels: l, io: io] ++ @opts)
      {:ok, input, geo} = Vision.preprocess(m, fr)

      {:ok, outs} =
        HexagonTpu.predict(m, [input], quantize: :none, dequantize: :none, output: :binary)

      assert {:ok, ^dets} = Vision.detections(m, outs, [geometry: geo, labels: l] ++ @opts)
      assert Enum.all?(dets, &(&1.label in l))
    end
  end
end
