# predict_soak.exs - HexagonTpu.predict/3 under a long, steady load (`make soak`,
# docs/reliability.md).
#
#   SOAK_PREDICTS=200000 mix run test/soak/predict_soak.exs MODEL
#
# MODEL is examples/add.txt built with htpu-refbuild. Runs SOAK_PREDICTS predicts through the
# shared reference runtime, cycling through add_f32 (f32 binaries, a + b for multiples of 1/4,
# exact in f32), scale_u8 with f32 binaries (quantized and dequantized by the C core) and
# scale_u8 with u8 binaries (quantize: :none, dequantize: :none), and checks every answer
# against its value computed here (test/soak/soak.c explains scale_u8's exact answers). Every
# 1,000 predicts both models are closed and loaded again (by path and as a binary in turn);
# every 1,000th predict is followed by two calls that must fail (a short input: :mismatch; a
# NaN: :nan).
#
# Memory (after a garbage collection of every process): the OS resident set (Rss of
# /proc/self/smaps_rollup, and HexagonTpu.Stats.memory/0's figure) and :erlang.memory(:total),
# after the warm-up (10,000 predicts, or half of a shorter run) and at the end, in the same
# state. Exits 1 on any wrong answer, on live counters (HexagonTpu.Stats.native/0) that
# differ between those two marks or are not back at their baseline once the models and the
# shared runtime are closed, on execute counters that do not match the calls made, and when
# the resident set grew by more than 1% from the warm-up mark to the end.

defmodule PredictSoak do
  alias HexagonTpu.{Error, Runtime, Stats}

  @reload 1_000
  @rss_limit_percent 1.0
  @live [:live_runtimes, :live_contexts, :live_graphs, :live_shared_buffers]

  def main([model_path]) do
    n =
      case Integer.parse(System.get_env("SOAK_PREDICTS", "200000")) do
        {n, ""} when n >= 100 -> n
        _ -> fail("SOAK_PREDICTS must be a number >= 100, got #{System.get_env("SOAK_PREDICTS")}")
      end

    warmup = min(10_000, div(n, 2))
    bytes = File.read!(model_path)
    base = mark(0)

    IO.puts(
      "predict soak: #{n} predicts through HexagonTpu.predict/3 (#{model_path}: add_f32, " <>
        "scale_u8 as f32 and u8), both models reloaded every #{@reload}"
    )

    # Printed before the loop also so that the code every report runs is loaded before the
    # warm-up mark: modules loaded later (String, Float, ...) grow the JIT's memory by ~100 kB.
    print("start", base, base)

    state = %{
      models: load(model_path, 0),
      path: model_path,
      bytes: bytes,
      wrong: 0,
      failing: 0,
      nan_calls: 0
    }

    {state, warm} = loop(0, n, warmup, state, base, nil)
    last = mark(n)
    print("end", last, base)
    close(state.models)
    :ok = Runtime.close_shared()
    closed = wait_for_baseline(base, n)
    print("closed", closed, base)

    growth = 100 * (last.rss - warm.rss) / warm.rss
    secs = (last.t - base.t) / 1000

    IO.puts(
      "predict soak: #{n} predicts in #{Float.round(secs, 1)} s " <>
        "(#{round(n / max(secs, 0.001))}/s), #{state.failing} failing calls as expected; " <>
        "RSS #{kb(warm.rss)} kB after warm-up, #{kb(last.rss)} kB at the end " <>
        "(#{signed(growth)}%, limit #{@rss_limit_percent}%); BEAM total " <>
        "#{kb(warm.total)} -> #{kb(last.total)} kB"
    )

    failures =
      [
        state.wrong > 0 && "#{state.wrong} wrong answers",
        # The short input is refused by HexagonTpu.Graph before the NIF; the NaN reaches the C
        # core, whose `executes` counts every execute and `execute_errors` the failed ones.
        {calls(last, base, :executes), calls(last, base, :execute_errors)} !=
          {n + state.nan_calls, state.nan_calls} &&
          "the counters grew by #{calls(last, base, :executes)} executes, " <>
            "#{calls(last, base, :execute_errors)} errors; expected #{n + state.nan_calls} " <>
            "and #{state.nan_calls}",
        live(warm) != live(last) && "live counters differ between warm-up and the end",
        live(closed) != live(base) &&
          "live counters not back at baseline: #{inspect(live(closed))}, " <>
            "baseline #{inspect(live(base))}",
        growth > @rss_limit_percent &&
          "RSS grew #{signed(growth)}% after warm-up (limit #{@rss_limit_percent}%)"
      ]
      |> Enum.filter(& &1)

    if failures == [] do
      IO.puts("predict soak: ok: every answer right, live counters back at baseline")
    else
      Enum.each(failures, &IO.puts(:stderr, "predict soak: FAILED: #{&1}"))
      System.halt(1)
    end
  end

  def main(_) do
    IO.puts(:stderr, "usage: SOAK_PREDICTS=N mix run test/soak/predict_soak.exs MODEL")
    System.halt(2)
  end

  defp loop(i, n, _warmup, state, _base, warm) when i == n, do: {state, warm}

  defp loop(i, n, warmup, state, base, warm) do
    state =
      if i > 0 and rem(i, @reload) == 0 do
        close(state.models)
        source = if rem(div(i, @reload), 2) == 1, do: {:binary, state.bytes}, else: state.path
        %{state | models: load(source, i)}
      else
        state
      end

    state = %{state | wrong: state.wrong + run(rem(i, 3), i, state.models)}
    state = if rem(i, 1000) == 999, do: failing(i, state), else: state

    warm =
      cond do
        i + 1 == warmup ->
          m = mark(i + 1)
          print("warm-up", m, base)
          m

        rem(i + 1, 50_000) == 0 ->
          print("progress", mark(i + 1), base)
          warm

        true ->
          warm
      end

    loop(i + 1, n, warmup, state, base, warm)
  end

  defp load(source, i) do
    opts = [backend: :reference]

    with {:ok, add} <- HexagonTpu.load_model(source, [graph: "add_f32"] ++ opts),
         {:ok, scale} <- HexagonTpu.load_model(source, [graph: "scale_u8"] ++ opts) do
      %{add: add, scale: scale}
    else
      {:error, e} -> fail("loading the model at predict #{i}: #{Exception.message(e)}")
    end
  end

  defp close(%{add: add, scale: scale}) do
    :ok = HexagonTpu.close(add)
    :ok = HexagonTpu.close(scale)
  end

  # add_f32: a = qa / 4, b = qb / 2; the sum is exact in f32.
  defp run(0, i, %{add: add}) do
    qa = for k <- 0..3, do: rem(i * 4 + k, 2001) - 1000
    qb = for k <- 0..3, do: rem(i * 7 + 3 * k, 1001)
    a = f32(Enum.map(qa, &(&1 * 0.25)))
    b = f32(Enum.map(qb, &(&1 * 0.5)))
    want = Enum.zip_with(qa, qb, fn x, y -> (x + 2 * y) * 0.25 end)
    got = ok!(HexagonTpu.predict(add, [a, b], output: :binary), i) |> hd() |> from_f32()
    count_wrong(i, "add_f32", got, want)
  end

  # scale_u8 with f32 in and out: x = (q_x - 128) * 0.1f quantizes back to q_x.
  defp run(1, i, %{scale: scale}) do
    qx = inputs_q(i)
    x = f32(Enum.map(qx, &((&1 - 128) * tenth())))
    want = Enum.with_index(qx, fn q, k -> round_f32((expected_q(q, k) - 128) * tenth()) end)
    got = ok!(HexagonTpu.predict(scale, [x], output: :binary), i) |> hd() |> from_f32()
    count_wrong(i, "scale_u8 f32", got, want)
  end

  defp run(2, i, %{scale: scale}) do
    qx = inputs_q(i)
    want = Enum.with_index(qx, &expected_q/2)

    got =
      HexagonTpu.predict(scale, [:erlang.list_to_binary(qx)],
        quantize: :none,
        dequantize: :none,
        output: :binary
      )
      |> ok!(i)
      |> hd()
      |> :erlang.binary_to_list()

    count_wrong(i, "scale_u8 u8", got, want)
  end

  defp failing(i, state) do
    %{scale: scale} = state.models

    case HexagonTpu.predict(scale, [f32([1.0, 2.0, 3.0])], output: :binary) do
      {:error, %Error{reason: :mismatch}} -> :ok
      other -> fail("predict #{i}: a 12-byte input gave #{inspect(other)}")
    end

    nan = <<1.0::float-32-native, 2.0::float-32-native, 0, 0, 0xC0, 0x7F, 4.0::float-32-native>>

    case HexagonTpu.predict(scale, [nan], output: :binary) do
      {:error, %Error{reason: :nan}} -> :ok
      other -> fail("predict #{i}: a NaN input gave #{inspect(other)}")
    end

    %{state | failing: state.failing + 2, nan_calls: state.nan_calls + 1}
  end

  defp inputs_q(i), do: for(k <- 0..3, do: rem(i * 13 + k * 61, 256))

  defp expected_q(q, k), do: min(max((q - 128) * (k + 1) + 128, 0), 255)

  # 0.1 as the f32 the model stores, and rounding to f32 (the BEAM rounds to nearest).
  defp tenth, do: round_f32(0.1)

  defp round_f32(x) do
    <<y::float-32-native>> = <<x::float-32-native>>
    y
  end

  defp f32(list), do: for(x <- list, into: <<>>, do: <<x::float-32-native>>)
  defp from_f32(bin), do: for(<<x::float-32-native <- bin>>, do: x)

  defp ok!({:ok, outputs}, _i), do: outputs
  defp ok!({:error, e}, i), do: fail("predict #{i}: #{Exception.message(e)}")

  defp count_wrong(_i, _what, same, same), do: 0

  defp count_wrong(i, what, got, want) do
    IO.puts(
      :stderr,
      "predict soak: predict #{i} (#{what}): got #{inspect(got)}, want #{inspect(want)}"
    )

    1
  end

  defp fail(message) do
    IO.puts(:stderr, "predict soak: FAILED: #{message}")
    System.halt(1)
  end

  defp mark(done) do
    Enum.each(Process.list(), &:erlang.garbage_collect/1)
    mem = Stats.memory()

    %{
      done: done,
      rss: smaps_rss(),
      statm_rss: mem.rss,
      total: mem.total,
      native: Stats.native(),
      t: now()
    }
  end

  defp live(m), do: Map.take(m.native, @live)

  defp calls(last, base, key), do: last.native[key] - base.native[key]

  # A handle dropped by garbage collection is closed by the NIF's reaper shortly after; poll
  # (collecting garbage each time) for up to 5 s before judging.
  defp wait_for_baseline(base, done, tries \\ 100) do
    m = mark(done)

    if live(m) == live(base) or tries == 0 do
      m
    else
      Process.sleep(50)
      wait_for_baseline(base, done, tries - 1)
    end
  end

  defp print(label, m, base) do
    l = live(m)

    IO.puts(
      "  #{String.pad_trailing(label, 8)} RSS #{kb(m.rss)} kB (statm #{kb(m.statm_rss)} kB)  " <>
        "BEAM total #{kb(m.total)} kB  " <>
        "live runtimes #{l.live_runtimes} contexts #{l.live_contexts} graphs #{l.live_graphs} " <>
        "shared #{l.live_shared_buffers}  predicts #{m.done}  " <>
        "#{Float.round((m.t - base.t) / 1000, 1)} s"
    )
  end

  defp kb(bytes), do: div(bytes, 1024)

  defp signed(x) when x >= 0, do: "+" <> :erlang.float_to_binary(x / 1, decimals: 2)
  defp signed(x), do: :erlang.float_to_binary(x / 1, decimals: 2)

  # Rss of /proc/self/smaps_rollup: a walk of the page tables now (VmRSS and statm, which
  # HexagonTpu.Stats.memory/0 reads, are counters the kernel documents as approximate).
  defp smaps_rss do
    "/proc/self/smaps_rollup"
    |> File.read!()
    |> String.split("\n")
    |> Enum.find_value(fn line ->
      case String.split(line) do
        ["Rss:", kb, "kB"] -> String.to_integer(kb) * 1024
        _ -> nil
      end
    end)
  end

  defp now, do: System.monotonic_time(:millisecond)
end

PredictSoak.main(System.argv())
