# HexagonTpu.Vision.detect/3's host time over its own C section (bench/bench_vision.c runs it):
#
#     mix run bench/vision_bench.exs MODEL CALLS
#
# MODEL (written by bench_vision.c) takes a [1,640,640,3] u8 input and gives a [1,84,8400] u8
# head. Each call letterboxes a 1920x1080 RGB24 frame into the input, executes and decodes,
# in the NIF; per call, wall time - stats.total_ns (the whole C section) is what Elixir adds,
# and total_ns - execute_ns the C section without graphExecute. Prints min and median of each.

{:ok, _} = Application.ensure_all_started(:hexagon_tpu)
[path, calls] = System.argv()
calls = String.to_integer(calls)

model = HexagonTpu.load_model!(path, backend: :reference)
data = :crypto.strong_rand_bytes(1920 * 1080 * 3)
{:ok, frame} = HexagonTpu.Vision.Frame.new(data, 1920, 1080, :rgb24)

median = fn list -> Enum.at(Enum.sort(list), div(length(list), 2)) end

one = fn ->
  t0 = System.monotonic_time(:nanosecond)
  {:ok, _dets, stats} = HexagonTpu.Vision.detect(model, frame, stats: true)
  wall = System.monotonic_time(:nanosecond) - t0
  {wall - stats.total_ns, stats.total_ns - stats.execute_ns}
end

for _ <- 1..10, do: one.()
runs = for _ <- 1..calls, do: one.()
over = Enum.map(runs, &elem(&1, 0))
c = Enum.map(runs, &elem(&1, 1))
IO.puts("detect_over_us #{Enum.min(over) / 1000} #{median.(over) / 1000}")
IO.puts("detect_c_us #{Enum.min(c) / 1000} #{median.(c) / 1000}")
