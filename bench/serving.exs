# The cost of serving the digits model (models/digits/) through Nx.Serving, against calling
# HexagonTpu.predict/3 directly with binaries. One run reports, per scenario, the per-request
# latency (mean, p50, p99; wall time in the caller), the throughput as rows/s and as a ratio to
# the direct binary path, and the VM's CPU time per row (all its threads):
#
#   direct       predict/3, binary in and out, 1 caller (the baseline)
#   nx           predict/3, Nx tensor in and out, 1 caller
#   direct x64   predict/3, binaries, 64 concurrent callers (one model: executes serialize)
#   batch 64     predict_batch/3, 64 rows per call, 1 caller (per row)
#   serving xN   Nx.Serving.batched_run/2 of one Nx image per request, N = 1, 8, 64 callers
#   no-op x64    an Nx.Serving with the same settings whose function runs nothing: Nx.Serving's
#                own cost per request, the ceiling for any serving
#                (HexagonTpu.Serving: batch_size 32, 2 partitions, batch_timeout 1 ms; BATCH_SIZE,
#                PARTITIONS and BATCH_TIMEOUT choose others)
#
# The goal: serving x64 throughput >= 0.8 x direct x64 throughput, checked at the end by
# running the two alternately (ROUNDS=3 times) and taking the median ratio.
#
#     make bench-serving [SECS=2]          (real Nx from ../shared/vendor/elixir)
#
# Not a test: figures depend on the machine and its load. docs/serving.md has a run's output.

{:ok, _} = Application.ensure_all_started(:hexagon_tpu)

if not List.keymember?(Application.started_applications(), :nx, 0) do
  IO.puts(:stderr, "bench/serving.exs: needs Nx (run it with make bench-serving)")
  System.halt(2)
end

secs = String.to_integer(System.get_env("SECS", "2"))
dir = Path.expand("../models/digits", __DIR__)
path = Path.join(dir, "digits.bin")
x = File.read!(Path.join(dir, "test_x.f32"))
model = HexagonTpu.load_model!(path, backend: :reference)
[input] = HexagonTpu.Graph.inputs(model)
row_bytes = input.num_elements * 4
bins = for <<row::binary-size(row_bytes) <- x>>, do: row
tensors = Enum.map(bins, &(&1 |> Nx.from_binary({:f, 32}) |> Nx.reshape(input.shape)))
images = List.to_tuple(bins)
timages = List.to_tuple(tensors)
count = tuple_size(images)

batch_size = String.to_integer(System.get_env("BATCH_SIZE", "32"))
partitions = String.to_integer(System.get_env("PARTITIONS", "2"))
timeout = String.to_integer(System.get_env("BATCH_TIMEOUT", "1"))

serving =
  HexagonTpu.Serving.new(path,
    backend: :reference,
    batch_size: batch_size,
    batch_timeout: timeout,
    partitions: partitions
  )

# Nx.Serving's own cost: the same settings, a function that runs nothing and answers each
# row with a constant (what no serving can beat).
[output] = HexagonTpu.Graph.outputs(model)
constant = Nx.broadcast(Nx.tensor(0.0, type: {:f, 32}), put_elem(output.shape, 0, batch_size))

noop =
  Nx.Serving.new(
    fn _opts -> fn batch -> Nx.slice_along_axis(constant, 0, batch.size, axis: 0) end end,
    compiler: Nx.Defn.Evaluator,
    max_concurrency: partitions
  )
  |> Nx.Serving.client_preprocessing(fn [t] -> {Nx.Batch.concatenate([t]), :ok} end)

{:ok, _} =
  Supervisor.start_link(
    [
      {Nx.Serving, serving: serving, name: BenchDigits},
      {Nx.Serving,
       serving: noop,
       name: BenchNoop,
       batch_size: batch_size,
       batch_timeout: timeout,
       partitions: partitions > 1}
    ],
    strategy: :one_for_one
  )

# The VM's CPU time so far in us (user + system, every thread: schedulers, dirty schedulers,
# the reference backend's work), from /proc/self/stat in clock ticks; nil where there is none.
# Per row it is what a scenario costs the machine, which moves less with other work on it than
# the throughput does.
tick_us =
  case System.cmd("getconf", ["CLK_TCK"], stderr_to_stdout: true) do
    {hz, 0} -> div(1_000_000, String.to_integer(String.trim(hz)))
    _ -> 10_000
  end

cpu_us = fn ->
  case File.read("/proc/self/stat") do
    {:ok, stat} ->
      [_, rest] = String.split(stat, ") ", parts: 2)
      fields = String.split(rest, " ")
      (String.to_integer(Enum.at(fields, 11)) + String.to_integer(Enum.at(fields, 12))) * tick_us

    _ ->
      nil
  end
end

# `callers` processes each call `fun.(i)` (i a running index) until `secs` have passed; returns
# {requests, elapsed us, sorted latencies in ns, rows per call, CPU us}. `rows` counts what one
# call does.
measure = fn callers, rows, fun ->
  cpu0 = cpu_us.()
  deadline = System.monotonic_time(:millisecond) + secs * 1000
  t0 = System.monotonic_time(:microsecond)

  lat =
    1..callers
    |> Enum.map(fn c ->
      Task.async(fn ->
        Stream.iterate(c * 7919, &(&1 + 1))
        |> Enum.reduce_while([], fn i, acc ->
          if System.monotonic_time(:millisecond) >= deadline do
            {:halt, acc}
          else
            s = System.monotonic_time(:nanosecond)
            fun.(rem(i, count))
            {:cont, [System.monotonic_time(:nanosecond) - s | acc]}
          end
        end)
      end)
    end)
    |> Enum.flat_map(&Task.await(&1, :infinity))
    |> Enum.sort()

  elapsed = System.monotonic_time(:microsecond) - t0
  cpu = if cpu0, do: cpu_us.() - cpu0
  {length(lat) * rows, elapsed, lat, rows, cpu}
end

direct = fn i ->
  {:ok, [_]} = HexagonTpu.predict(model, [elem(images, i)], output: :binary)
end

batch64 = List.to_tuple(for k <- 0..8, do: IO.iodata_to_binary(Enum.slice(bins, k * 64, 64)))

scenarios = [
  {"direct", 1, 1, direct},
  {"nx", 1, 1, fn i -> {:ok, [_]} = HexagonTpu.predict(model, [elem(timages, i)]) end},
  {"direct x64", 64, 1, direct},
  {"batch 64", 1, 64,
   fn i ->
     {:ok, [_]} = HexagonTpu.predict_batch(model, [elem(batch64, rem(i, 8))], output: :binary)
   end},
  {"serving x1", 1, 1, fn i -> [_] = Nx.Serving.batched_run(BenchDigits, [elem(timages, i)]) end},
  {"serving x8", 8, 1, fn i -> [_] = Nx.Serving.batched_run(BenchDigits, [elem(timages, i)]) end},
  {"serving x64", 64, 1,
   fn i -> [_] = Nx.Serving.batched_run(BenchDigits, [elem(timages, i)]) end},
  {"no-op x64", 64, 1, fn i -> Nx.Serving.batched_run(BenchNoop, [elem(timages, i)]) end}
]

# warm up every path once
for {_, _, _, fun} <- scenarios, do: fun.(0)

results = for {label, callers, rows, fun} <- scenarios, do: {label, measure.(callers, rows, fun)}

rate = fn {rows, us, _lat, _, _} -> rows * 1.0e6 / us end
cpu_row = fn {rows, _, _, _, cpu} -> if cpu, do: cpu / max(rows, 1), else: nil end
pctl = fn lat, p -> Enum.at(lat, max(div(length(lat) * p + 99, 100), 1) - 1) / 1000 end
mean = fn lat -> Enum.sum(lat) / max(length(lat), 1) / 1000 end
base = rate.(elem(List.keyfind(results, "direct", 0), 1))
f = fn v, d -> :erlang.float_to_binary(v * 1.0, decimals: d) end

IO.puts(
  "digits model, reference backend, #{System.schedulers_online()} schedulers, " <>
    "#{secs} s per scenario; serving: batch_size #{batch_size}, batch_timeout #{timeout} ms, " <>
    "partitions #{partitions}"
)

IO.puts(
  String.pad_trailing("scenario", 13) <>
    "   latency us: mean      p50      p99    rows/s   x direct  CPU us/row"
)

for {label, {_, _, lat, rows, _} = r} <- results do
  per_row = if rows > 1, do: " (per call of #{rows} rows)", else: ""

  IO.puts(
    String.pad_trailing(label, 13) <>
      String.pad_leading(f.(mean.(lat), 1), 21) <>
      String.pad_leading(f.(pctl.(lat, 50), 1), 9) <>
      String.pad_leading(f.(pctl.(lat, 99), 1), 9) <>
      String.pad_leading(f.(rate.(r), 0), 10) <>
      String.pad_leading(f.(rate.(r) / base, 2), 10) <>
      String.pad_leading(if(c = cpu_row.(r), do: f.(c, 1), else: "-"), 12) <> per_row
  )
end

# The goal, measured so that the machine's load drifts less between the two sides: direct x64
# and serving x64 alternately, ROUNDS times (3), each ratio and their median.
rounds = String.to_integer(System.get_env("ROUNDS", "3"))
serving64 = elem(List.keyfind(scenarios, "serving x64", 0), 3)

ratios =
  for _ <- 1..rounds do
    dm = measure.(64, 1, direct)
    sm = measure.(64, 1, serving64)
    {rate.(dm), rate.(sm), rate.(sm) / rate.(dm), cpu_row.(dm), cpu_row.(sm)}
  end

for {d, s, r, dc, sc} <- ratios do
  cpu = if dc && sc, do: " (CPU us/row #{f.(dc, 1)} and #{f.(sc, 1)})", else: ""
  IO.puts("  direct x64 #{f.(d, 0)} rows/s, serving x64 #{f.(s, 0)} rows/s: #{f.(r, 2)}" <> cpu)
end

ratio = ratios |> Enum.map(&elem(&1, 2)) |> Enum.sort() |> Enum.at(div(rounds, 2))

IO.puts(
  "serving x64 / direct x64 throughput, median of #{rounds}: #{f.(ratio, 2)} (goal >= 0.80: " <>
    if(ratio >= 0.8, do: "met)", else: "NOT met)")
)

# What else ran meanwhile: the figures above are only comparable at a similar load.
case File.read("/proc/loadavg") do
  {:ok, load} ->
    IO.puts("load average at the end: " <> Enum.join(Enum.take(String.split(load), 3), " "))

  _ ->
    :ok
end
