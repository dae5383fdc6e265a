defmodule HexagonTpu.BoardTest do
  # HexagonTpu.Stats.board/1 and boot/0 against fake board trees (never this machine's /sys),
  # and the runtime's NPU lock options. Not async: the busy share and the boot figures are
  # this VM's.
  use ExUnit.Case, async: false

  import HexagonTpu.BoardTree
  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Runtime, Stats}

  describe "Stats.board/1" do
    test "two NSP zones: the hottest, the lowest hot trip, hot or not" do
      root = dragon!("two_nsp", 93_400)
      zone!(root, 13, "nspss1-thermal", 94_100, hot: 92_000, critical: 110_000)
      board = Stats.board(root: root)

      assert board.nsp == %{
               state: :ok,
               temp_c: 94.1,
               hot_c: 90.0,
               zone: "nspss1-thermal",
               hot: true
             }

      assert board.cpu == %{state: :ok, temp_c: 55.5}

      assert Enum.map(board.zones, & &1.zone) ==
               ~w(thermal_zone0 thermal_zone1 thermal_zone12 thermal_zone13)

      nsp0 = Enum.find(board.zones, &(&1.type == "nspss0-thermal"))
      assert %{kind: :nsp, state: :ok, temp_c: 93.4, hot_c: 90.0, critical_c: 110.0} = nsp0

      assert nsp0.trips == [
               %{type: "hot", temp_c: 90.0, state: :ok},
               %{type: "critical", temp_c: 110.0, state: :ok}
             ]

      assert Enum.find(board.zones, &(&1.type == "cpu0-thermal")).kind == :cpu
      assert Enum.all?(board.zones, &(&1.trips_skipped == 0))

      assert [p0, p4] = board.cpufreq

      assert %{policy: "policy0", cpus: [0, 1, 2, 3], governor: "performance", cur_mhz: 1804.8} =
               p0

      assert %{policy: "policy4", cpus: [4, 5, 6], governor_state: :ok, hw_max_mhz: 2400.0} = p4
      assert board.notes == []
    end

    test "a cool board is not hot; missing zones and policies are said, not numbers" do
      board = Stats.board(root: dragon!("cool"))
      assert board.nsp.hot == false and board.nsp.temp_c == 61.0

      empty = Stats.board(root: root!("empty"))
      assert empty.nsp == %{state: :missing, temp_c: nil, hot_c: nil, zone: nil, hot: false}
      assert empty.cpu == %{state: :missing, temp_c: nil}
      assert empty.zones == [] and empty.cpufreq == []
      assert [thermal, cpufreq] = empty.notes
      assert thermal =~ "no thermal zones" and thermal =~ "/sys/class/thermal"
      assert cpufreq =~ "no cpufreq policies"
    end

    test "trip points past the listed twelve: counted, noted, and still the zone's hot trip" do
      root = root!("many_trips")
      passive = for i <- 0..11, do: {:passive, 95_000 + i * 100}
      zone!(root, 12, "nspss0-thermal", 88_500, passive ++ [hot: 88_000, critical: 105_000])
      board = Stats.board(root: root)
      [z] = board.zones
      assert length(z.trips) == 12 and z.trips_skipped == 2
      assert z.hot_c == 88.0 and z.critical_c == 105.0
      assert board.nsp.hot == true and board.nsp.hot_c == 88.0

      assert ("thermal_zone12 (nspss0-thermal): 2 trip points past the first 12 not listed " <>
                "(its hot_c and critical_c count them)") in board.notes
    end

    test "unreadable files (a FIFO, a directory) are refused at once, absurd values flagged" do
      root = root!("bad")
      zone!(root, 0, "nspss0-thermal", nil, hot: 90_000)
      {_, 0} = System.cmd("mkfifo", [Path.join(root, "sys/class/thermal/thermal_zone0/temp")])
      zone!(root, 1, "nspss1-thermal", nil)
      File.mkdir_p!(Path.join(root, "sys/class/thermal/thermal_zone1/temp"))
      zone!(root, 2, "cpu0-thermal", "-273000")
      zone!(root, 3, "cpu1-thermal", "warm")
      policy!(root, 0, "sched util!", "0", "0 1")
      board = Stats.board(root: root)

      [fifo, dir, cold, word] = board.zones
      assert %{state: :unreadable, temp_c: nil} = fifo
      assert fifo.note =~ "is a FIFO (named pipe); expected a regular file"
      assert %{state: :unreadable} = dir
      assert dir.note =~ "is a directory"
      assert %{state: :absurd, temp_c: nil} = cold
      assert cold.note =~ "outside -40..150 C"
      assert %{state: :absurd} = word
      assert board.nsp.state == :unreadable and board.nsp.temp_c == nil and board.nsp.hot == false
      assert board.cpu.state == :absurd

      assert [%{governor: nil, governor_state: :absurd, cur_mhz: nil, cur_state: :absurd} = p] =
               board.cpufreq

      assert p.note =~ "not a governor name" and p.note =~ "not a frequency in kHz"
    end

    test "the NPU's busy share and executes per second since a reading" do
      root = dragon!("load")
      model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
      first = Stats.board(root: root)
      for _ <- 1..7, do: {:ok, _} = add(model)
      later = Stats.board(root: root, since: first)

      interval_ns = later.counters.at_ns - first.counters.at_ns
      executed = later.counters.execute_ns_total - first.counters.execute_ns_total
      assert later.counters.executes - first.counters.executes == 7
      assert later.interval_ms == interval_ns / 1.0e6
      assert later.npu_busy == min(executed / interval_ns, 1.0) and later.npu_busy > 0
      assert later.executes_per_s == 7 * 1.0e9 / interval_ns
      # without :since, against the previous reading on this node
      again = Stats.board(root: root)
      assert again.interval_ms == (again.counters.at_ns - later.counters.at_ns) / 1.0e6
      HexagonTpu.close(model)
    end

    test "the application environment's :board_root is the default root" do
      root = dragon!("env", 70_000)
      previous = Application.get_env(:hexagon_tpu, :board_root)
      Application.put_env(:hexagon_tpu, :board_root, root)

      try do
        assert Stats.board().nsp.temp_c == 70.0
      after
        Application.put_env(:hexagon_tpu, :board_root, previous)
      end
    end

    test "bad options raise naming them" do
      file = Path.join(root!("file_root"), "not_a_dir")
      File.write!(file, "")

      assert_raise ArgumentError,
                   ~r"root '#{file}' is a regular file; expected a directory",
                   fn ->
                     Stats.board(root: file)
                   end

      assert_raise ArgumentError, ~r"expected :root to be a directory", fn ->
        Stats.board(root: 1)
      end

      # not a reading at all: a string, a float, a negative number, a map without counters
      for since <- ["0", 1.5, -1, %{}, %{counters: "x"}, [counters: %{}]] do
        error =
          assert_raise ArgumentError, fn ->
            Stats.board(root: dragon!("since_bad"), since: since)
          end

        assert error.message =~
                 "HexagonTpu.Stats.board/1: expected :since to be an earlier board/1 reading " <>
                   "(its :counters :at_ns, :executes and :execute_ns_total non-negative " <>
                   "integers) or nil, got #{inspect(since)}"
      end

      # counters of the right keys but not the right values: the option, not the arithmetic
      root = dragon!("since")

      for counters <- [
            %{at_ns: 0, executes: :a, execute_ns_total: 0},
            %{at_ns: 0, executes: 1, execute_ns_total: 2.5},
            %{at_ns: "0", executes: 1, execute_ns_total: 2},
            %{at_ns: 0, executes: -1, execute_ns_total: 2}
          ] do
        assert_raise ArgumentError, ~r"expected :since to be an earlier board/1 reading", fn ->
          Stats.board(root: root, since: %{counters: counters})
        end
      end

      zero = %{counters: %{at_ns: 0, executes: 0, execute_ns_total: 0}}
      assert is_float(Stats.board(root: root, since: zero).npu_busy)

      assert_raise ArgumentError, ~r"unknown option :rot", fn -> Stats.board(rot: "/") end
    end
  end

  describe "Stats.boot/0" do
    test "each model's load time and first answer, once" do
      name = "boot_#{System.unique_integer([:positive])}"
      text = String.replace(add_f32(), "graph add_f32", "graph #{name}")
      model = HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)
      loaded = Stats.boot().models[name]
      assert %{loads: 1, first_answer_ms: nil, answer_after_load_ms: nil} = loaded
      assert loaded.load_ms > 0 and loaded.first_loaded_ms > 0

      {:ok, _} = HexagonTpu.predict(model, add_inputs(), output: :binary)
      answered = Stats.boot().models[name]
      assert answered.first_answer_ms >= answered.first_loaded_ms

      assert_in_delta answered.answer_after_load_ms,
                      answered.first_answer_ms - answered.first_loaded_ms,
                      0.002

      {:ok, _} = HexagonTpu.predict(model, add_inputs(), output: :binary)
      assert Stats.boot().models[name].first_answer_ms == answered.first_answer_ms

      # a second load of the same graph counts, its first answer stays the first one
      again = HexagonTpu.load_model!({:binary, build!(text)}, backend: :reference)
      {:ok, _} = HexagonTpu.predict(again, add_inputs(), output: :binary)
      assert %{loads: 2, first_answer_ms: first} = Stats.boot().models[name]
      assert first == answered.first_answer_ms
      boot = Stats.boot()
      assert %DateTime{} = boot.started_at
      assert boot.uptime_ms >= first and boot.vm_uptime_ms_at_start >= 0
      HexagonTpu.close(model)
      HexagonTpu.close(again)
    end
  end

  describe "Stats.boot/0 of load_models/2" do
    test "each model of the list: its load time and first answer, as load_model/2's" do
      names = for s <- ["a", "b"], do: "boot_#{s}_#{System.unique_integer([:positive])}"
      texts = for name <- names, do: String.replace(add_f32(), "graph add_f32", "graph #{name}")
      started = System.monotonic_time()

      [a, b] =
        HexagonTpu.load_models!(Enum.map(texts, &{:binary, build!(&1)}), backend: :reference)

      took_ms = System.convert_time_unit(System.monotonic_time() - started, :native, :microsecond)

      for name <- names do
        loaded = Stats.boot().models[name]
        assert %{loads: 1, first_answer_ms: nil, answer_after_load_ms: nil} = loaded
        assert loaded.load_ms > 0 and loaded.load_ms <= took_ms / 1000
      end

      {:ok, _} = HexagonTpu.predict(a, add_inputs(), output: :binary)
      [name_a, name_b] = names
      answered = Stats.boot().models[name_a]
      assert answered.first_answer_ms >= answered.first_loaded_ms
      assert Stats.boot().models[name_b].first_answer_ms == nil
      {:ok, _} = HexagonTpu.predict(b, add_inputs(), output: :binary)
      assert Stats.boot().models[name_b].first_answer_ms >= answered.first_answer_ms
      Enum.each([a, b], &HexagonTpu.close/1)
    end
  end

  describe "Runtime :npu_lock options" do
    test "checked before anything is opened" do
      assert {:error, %Error{reason: :invalid_option, message: msg}} =
               Runtime.open(backend: :reference, npu_lock: "relative.lock")

      assert msg =~ "expected :npu_lock to be an absolute path"

      assert {:error, %Error{reason: :invalid_option}} =
               Runtime.open(backend: :reference, npu_lock_timeout: 0)
    end

    test "a lock path that cannot be a lock is the library's error, naming it" do
      fifo = Path.join(root!("fifo_lock"), "npu.lock")
      {_, 0} = System.cmd("mkfifo", [fifo])

      assert {:error, %Error{reason: :io, message: msg}} =
               Runtime.open(backend: :reference, npu_lock: fifo)

      assert msg =~ "cannot open the NPU lock '#{fifo}'"
      assert msg =~ "is a FIFO (named pipe); expected a regular file"
      assert {:ok, rt} = Runtime.open(backend: :reference, npu_lock: false)
      Runtime.close(rt)
    end
  end
end
