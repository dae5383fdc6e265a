# HexagonTpu.Vision.detect/3's host time over its own C section (bench/bench_vision.c runs it):
#
#     mix run bench/vision_bench.exs MODEL CALLS
#
# MODEL (written by bench_vision.c) takes a [1,640,640,3] u8 input and gives a [1,84,8400] u8
# head. Each call letterboxes a 1920x1080 RGB24 frame into the input, executes and decodes,
# in the NIF; per call, wall time - stats.total_ns (the whole C section) is what Elixir adds,
# and total_ns - execute_ns the C section without graphExecute. Interleaved with each call,
# HexagonTpu.predict/3 of the same model on the letterboxed input (own types, binaries), its
# wall time - its total_ns: what any dirty call of this length costs the BEAM, beside detect/3's.
# Prints min and median of each.

{:ok, _} = Application.ensure_all_started(:hexagon_tpu)
[path, calls] = System.argv()
calls = String.to_integer(calls)

model = HexagonTpu.load_model!(path, backend: :reference)
data = :crypto.strong_rand_bytes(1920 * 1080 * 3)
{:ok, frame} = HexagonTpu.Vision.Frame.new(data, 1920, 1080, :rgb24)

median = fn list -> Enum.at(Enum.sort(list), div(length(list), 2)) end

{:ok, input, _geometry} = HexagonTpu.Vision.preprocess(model, frame)
predict_opts = [quantize: :none, dequantize: :none, output: :binary, stats: true]

one = fn ->
  t0 = System.monotonic_time(:nanosecond)
  {:ok, _dets, stats} = HexagonTpu.Vision.detect(model, frame, stats: true)
  wall = System.monotonic_time(:nanosecond) - t0
  t1 = System.monotonic_time(:nanosecond)
  {:ok, _outs, ps} = HexagonTpu.predict(model, [input], predict_opts)
  pwall = System.monotonic_time(:nanosecond) - t1
  {wall - stats.total_ns, stats.total_ns - stats.execute_ns, pwall - ps.total_ns}
end

for _ <- 1..10, do: one.()
runs = for _ <- 1..calls, do: one.()

for {key, i} <- [detect_over_us: 0, detect_c_us: 1, predict_over_us: 2] do
  l = Enum.map(runs, &elem(&1, i))
  IO.puts("#{key} #{Enum.min(l) / 1000} #{median.(l) / 1000}")
end
