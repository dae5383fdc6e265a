defmodule HexagonTpu.Stats.Board do
  @moduledoc false
  # The shapes of HexagonTpu.Stats.board/1 and boot/0: the NIF's reading (millidegrees, kHz,
  # states) into °C, MHz and maps, the NPU's load between two readings, and the ledger's
  # figures in milliseconds.

  alias HexagonTpu.Ledger

  def from_nif(raw) do
    %{
      nsp: %{
        state: raw.nsp_state,
        temp_c: celsius(raw.nsp_temp_mc),
        hot_c: celsius(raw.nsp_hot_mc),
        zone: raw.nsp_zone,
        hot: raw.nsp_hot
      },
      cpu: %{state: raw.cpu_state, temp_c: celsius(raw.cpu_temp_mc)},
      zones: Enum.map(raw.zones, &zone/1),
      cpufreq: Enum.map(raw.policies, &policy/1),
      notes: notes(raw),
      counters: Map.take(raw, [:at_ns, :executes, :execute_ns_total])
    }
  end

  defp zone(z) do
    %{
      zone: z.zone,
      type: z.type,
      kind: z.kind,
      state: z.state,
      temp_c: celsius(z.temp_mc),
      note: z.note,
      hot_c: celsius(z.hot_mc),
      critical_c: celsius(z.critical_mc),
      trips: for(t <- z.trips, do: %{type: t.type, temp_c: celsius(t.temp_mc), state: t.state}),
      trips_skipped: z.trips_skipped
    }
  end

  defp policy(p) do
    %{
      policy: p.policy,
      cpus: cpus(p.cpus),
      governor: p.governor,
      governor_state: p.governor_state,
      cur_mhz: mhz(p.cur_khz),
      cur_state: p.cur_state,
      min_mhz: mhz(p.min_khz),
      max_mhz: mhz(p.max_khz),
      hw_min_mhz: mhz(p.hw_min_khz),
      hw_max_mhz: mhz(p.hw_max_khz),
      note: p.note
    }
  end

  defp notes(raw) do
    [
      raw.thermal_note,
      raw.cpufreq_note,
      raw.zones_skipped > 0 && "#{raw.zones_skipped} thermal zones past the first 128 not read",
      raw.policies_skipped > 0 &&
        "#{raw.policies_skipped} cpufreq policies past the first 32 not read"
    ]
    |> Enum.concat(trip_notes(raw.zones))
    |> Enum.filter(&is_binary/1)
  end

  defp trip_notes(zones) do
    for %{trips_skipped: n} = z <- zones, n > 0 do
      "#{z.zone} (#{z.type}): #{n} trip points past the first 12 not listed " <>
        "(its hot_c and critical_c count them)"
    end
  end

  defp celsius(nil), do: nil
  defp celsius(mc), do: mc / 1000

  defp mhz(nil), do: nil
  defp mhz(khz), do: khz / 1000

  # related_cpus is "0 1 2 3"; a token that is not a number is left out
  defp cpus(text) do
    for token <- String.split(text), {n, ""} <- [Integer.parse(token)], do: n
  end

  @doc "The reading with :npu_busy, :executes_per_s and :interval_ms since `previous`."
  def with_load(reading, %{at_ns: t0, executes: e0, execute_ns_total: ns0})
      when reading.counters.at_ns > t0 do
    %{at_ns: t1, executes: e1, execute_ns_total: ns1} = reading.counters
    interval = t1 - t0
    # the counters only grow in one process; another's reading gives 0, not a negative share
    busy = max(ns1 - ns0, 0) / interval

    Map.merge(reading, %{
      npu_busy: min(busy, 1.0),
      executes_per_s: max(e1 - e0, 0) * 1.0e9 / interval,
      interval_ms: interval / 1.0e6
    })
  end

  def with_load(reading, _previous),
    do: Map.merge(reading, %{npu_busy: nil, executes_per_s: nil, interval_ms: nil})

  @doc "HexagonTpu.Stats.boot/0."
  def boot do
    case Ledger.started() do
      nil ->
        %{started_at: nil, vm_uptime_ms_at_start: nil, uptime_ms: nil, models: %{}}

      {started, at, vm_ms} ->
        now = System.monotonic_time()

        models =
          for {name, m} <- Ledger.models(), into: %{} do
            {name,
             %{
               loads: m.loads,
               load_ms: ms(m.load_native),
               first_loaded_ms: ms(m.first_loaded_native - started),
               first_answer_ms: m.answer_native && ms(m.answer_native - started),
               answer_after_load_ms:
                 m.answer_native && ms(m.answer_native - m.first_loaded_native)
             }}
          end

        %{
          started_at: at,
          vm_uptime_ms_at_start: vm_ms,
          uptime_ms: ms(now - started),
          models: models
        }
    end
  end

  defp ms(native), do: System.convert_time_unit(native, :native, :microsecond) / 1000
end
