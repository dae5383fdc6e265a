# predict_bench.exs - the Elixir half of `make bench`'s "Elixir predict over the C call" row:
# HexagonTpu.predict/3 on the digits model (f32 [1,64] in, quantized by the library; f32
# [1,10] out), the same call bench/bench_calls.c times through htpu_graph_execute.
#
#   mix run bench/predict_bench.exs MODEL REPS INNER
#
# Prints two lines, each over REPS batches of INNER predicts (after a warm-up batch):
#   "predict_us MIN MEDIAN": wall time per predict in µs with predict's default options
#     (scheduler: :auto), min and median of the batches' means;
#   "over_us MIN MEDIAN NORMAL_PCT": what predict adds to the C call it makes, per call:
#     predict's wall time minus that same call's `total_ns` (the whole htpu_graph_execute_ex,
#     timed inside the core), min and median of the batches' medians, and the share of calls
#     that ran on a normal scheduler. Both sides come from one call, so the figure does not
#     depend on how busy the machine was when the C side was timed in another process.

[path, reps, inner] = System.argv()
{reps, ""} = Integer.parse(reps)
{inner, ""} = Integer.parse(inner)

model = HexagonTpu.load_model!(path, backend: :reference)
[input] = HexagonTpu.Graph.inputs(model)
image = for i <- 1..input.num_elements, into: <<>>, do: <<rem(i * 7, 17) / 16::float-32-native>>

wall_batch = fn ->
  t0 = System.monotonic_time(:nanosecond)

  Enum.each(1..inner, fn _ ->
    {:ok, [_]} = HexagonTpu.predict(model, [image])
  end)

  (System.monotonic_time(:nanosecond) - t0) / inner / 1000
end

# {median µs over C in this batch, calls on a normal scheduler}
over_batch = fn ->
  samples =
    for _ <- 1..inner do
      t0 = System.monotonic_time(:nanosecond)
      {:ok, [_], stats} = HexagonTpu.predict(model, [image], stats: true)
      wall = System.monotonic_time(:nanosecond) - t0
      {(wall - stats.total_ns) / 1000, stats.scheduler == :normal}
    end

  over = samples |> Enum.map(&elem(&1, 0)) |> Enum.sort() |> Enum.at(div(inner, 2))
  {over, Enum.count(samples, &elem(&1, 1))}
end

median = fn sorted ->
  mid = div(length(sorted), 2)

  if rem(length(sorted), 2) == 1,
    do: Enum.at(sorted, mid),
    else: (Enum.at(sorted, mid - 1) + Enum.at(sorted, mid)) / 2
end

wall_batch.()
over_batch.()
# interleaved, so machine noise falls on both
runs = for _ <- 1..reps, do: {wall_batch.(), over_batch.()}
walls = runs |> Enum.map(&elem(&1, 0)) |> Enum.sort()
overs = runs |> Enum.map(fn {_, {o, _}} -> o end) |> Enum.sort()
normal = runs |> Enum.map(fn {_, {_, n}} -> n end) |> Enum.sum()

IO.puts("predict_us #{hd(walls)} #{median.(walls)}")
IO.puts("over_us #{hd(overs)} #{median.(overs)} #{Float.round(100 * normal / (reps * inner), 1)}")
