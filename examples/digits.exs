# Classifies the 539 held-out handwritten digits (models/digits/) through HexagonTpu and prints
# what examples/digits_demo.c prints: accuracy, float accuracy, agreement and latencies.
#
#     mix run examples/digits.exs
#
# One HexagonTpu.predict/3 per image, f32 in (quantized by the library) and f32 out
# (dequantized logits); the class is the first maximum. Uses Nx tensors when Nx is present,
# plain binaries otherwise. Exits with status 1 below the target: accuracy >= 95% and at most
# one point below the float model.

# `mix run` has started hexagon_tpu already; run as a plain script (`elixir -pa <ebin>`), this
# starts it, and with it Nx and :telemetry when they are present (its optional applications).
{:ok, _} = Application.ensure_all_started(:hexagon_tpu)

dir = Path.expand("../models/digits", __DIR__)
x = File.read!(Path.join(dir, "test_x.f32"))
labels = File.read!(Path.join(dir, "test_y.u8")) |> :binary.bin_to_list()
float_pred = File.read!(Path.join(dir, "float_pred.u8")) |> :binary.bin_to_list()

model = HexagonTpu.load_model!(Path.join(dir, "digits.bin"), backend: :reference)
[input] = HexagonTpu.Graph.inputs(model)
[output] = HexagonTpu.Graph.outputs(model)
nx? = List.keymember?(Application.started_applications(), :nx, 0)
row_bytes = input.num_elements * 4
^row_bytes = div(byte_size(x), length(labels))

# f32 image -> {class, predict wall time ns, library stats}
classify = fn row ->
  image = if nx?, do: row |> Nx.from_binary({:f, 32}) |> Nx.reshape(input.shape), else: row
  t0 = System.monotonic_time(:nanosecond)
  {:ok, [scores], stats} = HexagonTpu.predict(model, [image], stats: true)
  wall = System.monotonic_time(:nanosecond) - t0

  class =
    if nx? do
      scores |> Nx.flatten() |> Nx.argmax(tie_break: :low) |> Nx.to_number()
    else
      values = for <<v::float-32-native <- scores>>, do: v
      max = Enum.max(values)
      Enum.find_index(values, &(&1 == max))
    end

  {class, wall, stats}
end

results = for <<row::binary-size(row_bytes) <- x>>, do: classify.(row)
preds = Enum.map(results, &elem(&1, 0))
n = length(labels)
count = fn pairs -> Enum.count(pairs, fn {a, b} -> a == b end) end
correct = count.(Enum.zip(preds, labels))
float_correct = count.(Enum.zip(float_pred, labels))
agree = count.(Enum.zip(preds, float_pred))

pct = fn k -> :erlang.float_to_binary(100 * k / n, decimals: 2) end
# nearest-rank percentile of a sorted list, ns -> us
pctl = fn sorted, p -> Enum.at(sorted, max(div(n * p + 99, 100), 1) - 1) / 1000 end

latency = fn label, ns ->
  s = Enum.sort(ns)
  cols = for p <- [50, 90, 99, 100], do: :io_lib.format("~8.1f", [pctl.(s, p)])
  :io.format("  ~-22s p50 ~s   p90 ~s   p99 ~s   max ~s~n", [label | cols])
end

IO.puts(
  "model    models/digits/digits.bin, graph '#{model.name}': " <>
    "#{input.name} #{input.dtype}[#{input.num_elements}] -> " <>
    "#{output.name} #{output.dtype}[#{output.num_elements}], " <>
    if(nx?, do: "Nx tensors", else: "binaries")
)

IO.puts("samples  #{n} (held-out)")
IO.puts("accuracy #{pct.(correct)}% (#{correct}/#{n}) quantized on the reference backend")

IO.puts(
  "float    #{pct.(float_correct)}% (#{float_correct}/#{n}) float model before quantization"
)

IO.puts("agree    #{pct.(agree)}% (#{agree}/#{n}) same class as the float model")
IO.puts("latency per sample, microseconds:")
latency.("graphExecute", Enum.map(results, fn {_, _, s} -> s.execute_ns end))
latency.("htpu_graph_execute", Enum.map(results, fn {_, _, s} -> s.total_ns end))
latency.("HexagonTpu.predict", Enum.map(results, fn {_, w, _} -> w end))

HexagonTpu.close(model)
HexagonTpu.Runtime.close_shared()

# in integers, as the C demo: accuracy >= 95% and float accuracy - accuracy <= 1 point
if correct * 100 < 95 * n or (float_correct - correct) * 100 > n do
  IO.puts("FAIL: the target is >= 95% and within 1 point of the float model")
  System.halt(1)
else
  IO.puts("OK: >= 95% and within 1 point of the float model")
end
