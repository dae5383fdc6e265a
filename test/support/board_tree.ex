defmodule HexagonTpu.BoardTree do
  @moduledoc false
  # Fake board trees for the tests of the board's figures (HexagonTpu.Stats.board/1, the
  # Monitor's warnings): a directory standing in for /, with the thermal zones and cpufreq
  # policies a test writes there. Never this machine's /sys. And the htpu command, for the
  # tests of the NPU lock between htpu and this VM.

  @doc "A fresh empty root."
  def root!(name) do
    dir =
      Path.join(
        HexagonTpu.TestModels.tmp_dir!(),
        "board_#{name}_#{System.unique_integer([:positive])}"
      )

    File.mkdir_p!(dir)
    dir
  end

  @doc "thermal_zone<n> of `type` at `temp` (millidegrees, or any text) with trips [{type, temp}]."
  def zone!(root, n, type, temp, trips \\ []) do
    dir = Path.join(root, "sys/class/thermal/thermal_zone#{n}")
    File.mkdir_p!(dir)
    File.write!(Path.join(dir, "type"), "#{type}\n")
    if temp, do: File.write!(Path.join(dir, "temp"), "#{temp}\n")

    for {{trip_type, trip_temp}, i} <- Enum.with_index(trips) do
      File.write!(Path.join(dir, "trip_point_#{i}_type"), "#{trip_type}\n")
      File.write!(Path.join(dir, "trip_point_#{i}_temp"), "#{trip_temp}\n")
    end

    root
  end

  @doc "Sets a zone's temperature (millidegrees)."
  def temp!(root, n, temp),
    do: File.write!(Path.join(root, "sys/class/thermal/thermal_zone#{n}/temp"), "#{temp}\n")

  @doc "cpufreq policy<n>."
  def policy!(root, n, governor, cur_khz, cpus) do
    dir = Path.join(root, "sys/devices/system/cpu/cpufreq/policy#{n}")
    File.mkdir_p!(dir)

    for {f, v} <- [
          scaling_governor: governor,
          scaling_cur_freq: cur_khz,
          related_cpus: cpus,
          cpuinfo_max_freq: 2_400_000
        ],
        v != nil,
        do: File.write!(Path.join(dir, "#{f}"), "#{v}\n")

    root
  end

  @doc "A QCS6490-like board: two NSP zones (hot trip 90 C), two CPU zones, two policies."
  def dragon!(name, nsp_mc \\ 61_000) do
    root = root!(name)
    zone!(root, 0, "cpu0-thermal", 52_000, passive: 95_000)
    zone!(root, 1, "cpu4-thermal", 55_500, passive: 95_000)
    zone!(root, 12, "nspss0-thermal", nsp_mc, hot: 90_000, critical: 110_000)
    zone!(root, 13, "nspss1-thermal", nsp_mc - 1_500, hot: 90_000, critical: 110_000)
    policy!(root, 0, "performance", 1_804_800, "0 1 2 3")
    policy!(root, 4, "performance", 2_400_000, "4 5 6")
  end

  @doc """
  The htpu command: $HTPU_TEST_BUILD_DIR/htpu when there is one (make test's), else built once
  next to the NIF's own objects (the core archive is there already).
  """
  def htpu! do
    with dir when is_binary(dir) <- System.get_env("HTPU_TEST_BUILD_DIR"),
         path = Path.join(dir, "htpu"),
         true <- File.exists?(path) do
      path
    else
      _ -> build_htpu!()
    end
  end

  defp build_htpu! do
    native = Path.expand("../native", to_string(:code.priv_dir(:hexagon_tpu)))
    htpu = Path.join(native, "htpu")
    project = Path.expand("../..", __DIR__)

    {out, status} =
      System.cmd("make", ["-s", "--no-print-directory", "BUILD=#{native}", htpu],
        cd: project,
        stderr_to_stdout: true,
        env: [{"MAKEFLAGS", nil}, {"MFLAGS", nil}]
      )

    if status != 0, do: raise("building htpu failed: #{out}")
    htpu
  end
end
