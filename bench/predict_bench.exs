# predict_bench.exs - the Elixir half of `make bench`'s "Elixir predict over the C call" row:
# HexagonTpu.predict/3 on the digits model (f32 [1,64] in, quantized by the library; f32
# [1,10] out), the same call bench/bench_calls.c times through htpu_graph_execute.
#
#   mix run bench/predict_bench.exs MODEL REPS INNER
#
# Prints "predict_us MIN MEDIAN": wall time per predict in µs, min and median over REPS
# batches of INNER predicts each (after a warm-up batch), predict's default options.

[path, reps, inner] = System.argv()
{reps, ""} = Integer.parse(reps)
{inner, ""} = Integer.parse(inner)

model = HexagonTpu.load_model!(path, backend: :reference)
[input] = HexagonTpu.Graph.inputs(model)
image = for i <- 1..input.num_elements, into: <<>>, do: <<rem(i * 7, 17) / 16::float-32-native>>

batch = fn ->
  t0 = System.monotonic_time(:nanosecond)

  Enum.each(1..inner, fn _ ->
    {:ok, [_]} = HexagonTpu.predict(model, [image])
  end)

  (System.monotonic_time(:nanosecond) - t0) / inner / 1000
end

batch.()
times = Enum.sort(for _ <- 1..reps, do: batch.())
mid = div(reps, 2)

median =
  if rem(reps, 2) == 1,
    do: Enum.at(times, mid),
    else: (Enum.at(times, mid - 1) + Enum.at(times, mid)) / 2

IO.puts("predict_us #{hd(times)} #{median}")
