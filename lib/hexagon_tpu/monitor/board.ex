defmodule HexagonTpu.Monitor.Board do
  @moduledoc false
  # The board part of a HexagonTpu.Monitor tick: the reading (HexagonTpu.Stats.board/1, with
  # the NPU's load since the previous tick), the warnings it gives, and their log lines and
  # [:hexagon_tpu, :board, :throttling] events.
  #
  # The NSP turns hot at or above the hot threshold (the monitor's :hot_c, else the NSP zones'
  # own hot trip point) and stays hot until it falls below it by more than :hot_hysteresis_c: a
  # zone hovering at the trip (90.1, 89.9, 90.1 C) is one hot spell, not a warning every other
  # tick. A model throttles when, with the NSP hot, its mean execute time over the tick is above
  # its baseline by :slowdown or more. The baseline is its mean over the ticks in which the NSP
  # was not hot; a model that never ran on a cool board is compared with its first measured tick
  # instead (a board that starts hot, like an NVR whose encoder keeps the NSP near 95 C, still
  # shows a slowdown that grows). Execute times come from HexagonTpu.Ledger, per
  # graph name, counted while some monitor asks for them.

  alias HexagonTpu.{Ledger, Stats}

  @doc """
  `:ok` when the board's root (the monitor's `:board_root`, else the application's, else `/`)
  is a directory, else the option's error: a monitor that could never read the board is refused
  at its start, not found out at its first tick. A root that goes away later is said by the
  ticks (`board_error`, a warning logged once).
  """
  def check_root(%{board: false}), do: :ok

  def check_root(config) do
    {root, option} =
      if config.board_root,
        do: {config.board_root, ":board_root"},
        else: {Application.get_env(:hexagon_tpu, :board_root), "the application's :board_root"}

    case root_type(root) do
      :directory -> :ok
      cause -> {:error, HexagonTpu.Error.new(:invalid_option, root_message(option, root, cause))}
    end
  end

  defp root_type(nil), do: :directory

  defp root_type(root) when is_binary(root) and root != "" do
    if String.contains?(root, <<0>>) do
      "contains a NUL byte"
    else
      case File.stat(root) do
        {:ok, %{type: :directory}} -> :directory
        {:ok, %{type: :regular}} -> "is a regular file"
        {:ok, %{type: :device}} -> "is a device"
        {:ok, %{type: _other}} -> "is neither a file nor a directory (a FIFO, a socket)"
        {:error, :enoent} -> "does not exist"
        {:error, reason} -> "cannot be examined: #{:file.format_error(reason)}"
      end
    end
  end

  defp root_type(_root), do: "is not a non-empty string"

  defp root_message(option, root, cause) do
    "HexagonTpu.Monitor: expected #{option} to be a directory (the board's files are read " <>
      "under it), got #{inspect(root)}, which #{cause}"
  end

  @doc "The state a monitor keeps between ticks."
  def new, do: %{previous: nil, totals: %{}, cool: %{}, first: %{}, error: nil, hot: false}

  @doc "{board reading or nil, warnings, state}."
  def tick(state, config) do
    case read(state.previous, config) do
      {:ok, board} ->
        totals = Ledger.execute_totals()
        means = means(totals, state.totals)
        threshold = config.hot_c || board.nsp.hot_c
        hot? = hot?(board.nsp.temp_c, threshold, state.hot, config.hot_hysteresis_c)
        state = %{state | previous: board, totals: totals, error: nil, hot: hot?}
        state = %{state | first: Map.merge(means, state.first)}
        state = if hot?, do: state, else: %{state | cool: add_cool(state.cool, means)}
        warnings = if hot?, do: hot_warnings(board, threshold, means, state, config), else: []
        {board, warnings, state}

      {:error, message} ->
        {nil, [], %{state | error: message}}
    end
  end

  defp hot?(temp, threshold, _was_hot, _hysteresis)
       when not is_number(temp) or not is_number(threshold),
       do: false

  defp hot?(temp, threshold, true, hysteresis), do: temp >= threshold - hysteresis
  defp hot?(temp, threshold, false, _hysteresis), do: temp >= threshold

  defp read(previous, config) do
    {:ok, Stats.board(root: config.board_root, since: previous)}
  rescue
    # a root that went away: said in the report, the rest of the tick goes on
    e in ArgumentError -> {:error, Exception.message(e)}
  end

  # %{graph => {executes, execute_ns}} over the tick
  defp means(totals, previous) do
    for {name, {n, ns}} <- totals,
        {n0, ns0} = Map.get(previous, name, {0, 0}),
        n > n0,
        into: %{},
        do: {name, {n - n0, ns - ns0}}
  end

  defp add_cool(cool, means) do
    Enum.reduce(means, cool, fn {name, {n, ns}}, acc ->
      Map.update(acc, name, {n, ns}, fn {n0, ns0} -> {n0 + n, ns0 + ns} end)
    end)
  end

  defp hot_warnings(board, threshold, means, state, config) do
    nsp = %{
      kind: :nsp_hot,
      zone: board.nsp.zone,
      temp_c: board.nsp.temp_c,
      hot_c: threshold,
      clears_below_c: threshold - config.hot_hysteresis_c,
      npu_busy: board.npu_busy,
      executes_per_s: board.executes_per_s
    }

    slower =
      for {name, {n, ns}} <- Enum.sort(means),
          {bn, bns} = Map.get(state.cool, name) || Map.fetch!(state.first, name),
          mean = ns / n,
          baseline = bns / bn,
          baseline > 0 and mean >= baseline * (1 + config.slowdown) do
        %{
          kind: :throttling,
          graph: name,
          execute_ms: mean / 1.0e6,
          baseline_ms: baseline / 1.0e6,
          rise: mean / baseline - 1,
          cool_baseline: Map.has_key?(state.cool, name),
          nsp_temp_c: board.nsp.temp_c,
          hot_c: threshold
        }
      end

    [nsp | slower]
  end

  @doc "The measurements a tick adds to [:hexagon_tpu, :stats] (numbers only)."
  def measurements(nil), do: %{}

  def measurements(board) do
    hottest_mhz = for p <- board.cpufreq, is_number(p.cur_mhz), do: p.cur_mhz

    %{
      nsp_temp_c: board.nsp.temp_c,
      cpu_temp_c: board.cpu.temp_c,
      npu_busy: board.npu_busy,
      executes_per_s: board.executes_per_s,
      cpu_mhz_min: if(hottest_mhz == [], do: nil, else: Enum.min(hottest_mhz))
    }
    |> Map.reject(fn {_k, v} -> is_nil(v) end)
  end

  @doc "The [:hexagon_tpu, :board, :throttling] event of a warning that starts."
  def event(%{kind: :nsp_hot} = w, board, monitor) do
    HexagonTpu.Telemetry.board_throttling(
      Map.reject(
        Map.take(w, [:temp_c, :hot_c, :clears_below_c, :npu_busy, :executes_per_s]),
        &is_nil(elem(&1, 1))
      ),
      %{reason: :nsp_hot, zone: w.zone, graph: nil, monitor: monitor, board: board}
    )
  end

  def event(%{kind: :throttling} = w, board, monitor) do
    HexagonTpu.Telemetry.board_throttling(
      Map.take(w, [:execute_ms, :baseline_ms, :rise, :hot_c]) |> Map.put(:temp_c, w.nsp_temp_c),
      %{
        reason: :execute_slower,
        zone: board.nsp.zone,
        graph: w.graph,
        monitor: monitor,
        board: board
      }
    )
  end

  @doc "The log line of a warning that starts."
  def message(%{kind: :nsp_hot} = w) do
    load =
      if is_number(w.npu_busy),
        do: "; NPU busy #{fmt(w.npu_busy)}, #{fmt(w.executes_per_s)} executes/s",
        else: ""

    "HexagonTpu.Monitor: the NSP (#{w.zone}) is at #{deg(w.temp_c)} °C, at or above its hot " <>
      "trip point #{deg(w.hot_c)} °C: the NPU throttles itself there, which Linux's cooling " <>
      "devices do not show (a field measurement lost 22% of throughput at 94-96 °C)#{load}; " <>
      "it counts as hot until it falls below #{deg(w.clears_below_c)} °C"
  end

  def message(%{kind: :throttling} = w) do
    base = if w.cool_baseline, do: "its mean on a cool board", else: "its first measured interval"

    rise =
      if w.rise < 10,
        do: "#{round(w.rise * 100)}% above",
        else: "#{round(w.rise + 1)} times"

    "HexagonTpu.Monitor: graph '#{w.graph}' executes in #{fmt(w.execute_ms)} ms, " <>
      "#{rise} #{base} (#{fmt(w.baseline_ms)} ms), with the NSP at " <>
      "#{deg(w.nsp_temp_c)} °C (hot trip #{deg(w.hot_c)} °C): the NPU is throttling"
  end

  defp fmt(x) when is_float(x), do: :erlang.float_to_binary(x, decimals: 2)
  defp fmt(x), do: to_string(x)

  # temperatures as the board gives them: tenths of a degree
  defp deg(x) when is_number(x), do: :erlang.float_to_binary(x * 1.0, decimals: 1)
  defp deg(x), do: to_string(x)
end
