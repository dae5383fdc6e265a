# What `profile_every: 100` costs an application, measured where the application pays it:
# HexagonTpu.predict/3 on models/chain100 (100 ops, reference backend), one model loaded with
# `profile_every: 100, profile_level: :detailed` (1 call in 100 carries a profile handle, is
# read back, summarized and sent as [:hexagon_tpu, :profile] telemetry to a handler) and one
# without, alternating round by round in one run so machine noise falls on both:
#
#     mix run bench/profile_every.exs CHAIN100_BIN [calls_per_round] [rounds] [scheduler]
#
# Both models' calls take one path, `scheduler: :async` by default (submitted to the graph's
# worker, the path a sampled call takes): on this 2-core host chain100's execute (~150 us) sits
# at the short-call limit (200 us over the last 32 calls), so under :auto a model's calls
# settle on the short path or off it for reasons that are not profiling (one model at 145 us a
# call, the other at 260 us, either way round), and the ratio would measure that instead.
# `auto` as the fourth argument measures the default anyway.
#
# With :telemetry loadable (ERL_LIBS, as test/optional/env.sh sets it) the handler runs; without
# it the summary is still made and the emit is a no-op, which the output says. Prints
# `profile_every_ratio MIN MEDIAN` (calls/s profiled over calls/s not, per round pair).

{:ok, _} = Application.ensure_all_started(:hexagon_tpu)

{bin, calls, rounds, scheduler} =
  case System.argv() do
    [b, c, r, s] when s in ["async", "auto"] ->
      {b, String.to_integer(c), String.to_integer(r), String.to_atom(s)}

    [b, c, r] ->
      {b, String.to_integer(c), String.to_integer(r), :async}

    [b, c] ->
      {b, String.to_integer(c), 15, :async}

    [b] ->
      {b, 1000, 15, :async}

    _ ->
      raise "usage: mix run bench/profile_every.exs CHAIN100_BIN [calls_per_round] [rounds] " <>
              "[async|auto]"
  end

telemetry? =
  Code.ensure_loaded?(:telemetry) and match?({:ok, _}, Application.ensure_all_started(:telemetry))

if telemetry? do
  parent = self()

  :telemetry.attach(
    "bench-profile-every",
    [:hexagon_tpu, :profile],
    fn _event, m, meta, _ -> send(parent, {:profiled, m.accel_us, length(meta.ops)}) end,
    nil
  )
end

plain = HexagonTpu.load_model!(bin, backend: :reference)

# The same loaded graph with sampling attached (what load_model/2's profile_every: 100,
# profile_level: :detailed does to the graph it returns): a second load of the file is another
# context whose buffers land elsewhere in memory, and on this host that alone moved
# graphExecute of chain100 between 134 and 190 us per call, far more than what is measured.
sampled = HexagonTpu.Profile.attach(plain, 100, :detailed)

[input] = HexagonTpu.Graph.inputs(plain)
x = for i <- 0..(input.num_elements - 1), into: <<>>, do: <<rem(i, 13) * 0.25::float-32-native>>

drain = fn drain, n ->
  receive do
    {:profiled, _, 100} -> drain.(drain, n + 1)
  after
    0 -> n
  end
end

run = fn model ->
  t0 = System.monotonic_time(:nanosecond)

  for _ <- 1..calls,
      do: {:ok, [_]} = HexagonTpu.predict(model, [x], output: :binary, scheduler: scheduler)

  calls * 1.0e9 / (System.monotonic_time(:nanosecond) - t0)
end

# Warm-up: code loaded, the timing windows filled.
run.(plain)
run.(sampled)
drain.(drain, 0)

ratios =
  for r <- 1..rounds do
    # Which model goes first alternates, so a drift within a pair falls on both.
    if rem(r, 2) == 0 do
      a = run.(plain)
      run.(sampled) / a
    else
      b = run.(sampled)
      b / run.(plain)
    end
  end

profiled = drain.(drain, 0)
sorted = Enum.sort(ratios)
median = Enum.at(sorted, div(length(sorted), 2))

IO.puts(
  "profiled calls seen by the handler: #{profiled}, scheduler: #{scheduler} (telemetry #{if telemetry?, do: "attached", else: "absent: emit is a no-op"})"
)

IO.puts("profile_every_ratio #{Float.round(hd(sorted), 4)} #{Float.round(median, 4)}")
:ok = HexagonTpu.close(plain)
