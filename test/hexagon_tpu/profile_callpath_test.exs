defmodule HexagonTpu.ProfileCallPathTest do
  # A sampled call (profile_every) rides on the same call path as every other call: its
  # :timeout and :priority, the batch and async paths, SharedIO; a backend that cannot give the
  # profiles is refused at load; a profile that cannot be read loses the sample, never the
  # answer; nothing leaks. Stalls and capabilities come from the reference backend's control API
  # (process-wide), so not async. Runs without :telemetry (counters); the telemetry tests run
  # when it is loadable (test/optional/run.sh).
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, NIF, Runtime}

  @compile {:no_warn_undefined, [:telemetry]}

  # The graph "three" of test/c/prof_rig.c with its ops' names left empty.
  @nameless """
  graph three
    input x f32 [1,8]
    static c f32 [1,8] data=[1,2,3,4,5,6,7,8]
    native t f32 [1,8]
    native u f32 [1,8]
    output y f32 [1,8]
    op ElementWiseAdd x c -> t name=""
    op Relu t -> u name=""
    op ElementWiseMultiply u c -> y name=""
  """

  setup_all do
    %{path: build_file!(File.read!("models/chain100/chain100.txt"), "chain100_callpath")}
  end

  setup do
    on_exit(&reset_ref_controls/0)

    {live_profiles, _, _} = base = counts()
    assert live_profiles == 0
    %{base: base}
  end

  defp input, do: for(i <- 0..1023, into: <<>>, do: <<rem(i, 9) / 2 - 2::float-32-native>>)

  defp ms_since(t0),
    do: System.convert_time_unit(System.monotonic_time() - t0, :native, :millisecond)

  defp profiled, do: HexagonTpu.stats().profiled_calls

  # Profile handles and call objects back to where the test began (a call object goes with its
  # term: after a garbage collection; a timed-out call's execute may still be ending).
  defp no_leaks(base) do
    :erlang.garbage_collect()

    back =
      Enum.find_value(1..200, fn _ ->
        s = HexagonTpu.stats()
        now = {s.live_profiles, s.live_calls, s.nif_live_calls}
        if now == base, do: now, else: Process.sleep(10) && nil
      end)

    assert back == base,
           "live profiles, core calls, NIF calls: #{inspect(counts())} " <>
             "(at the start: #{inspect(base)})"
  end

  defp counts do
    s = HexagonTpu.stats()
    {s.live_profiles, s.live_calls, s.nif_live_calls}
  end

  # A batch of two rows on a stalled graph ends at its 50 ms :timeout, not the 300 ms stall.
  defp assert_batch_times_out(m, x) do
    stall(300_000)
    t0 = System.monotonic_time()

    assert {:error, %Error{reason: :timeout}} =
             HexagonTpu.predict_batch(m, [x <> x], output: :binary, timeout: 50)

    assert ms_since(t0) < 250
    stall(0)
  end

  test "a sampled call keeps the call's :timeout", %{path: path, base: base} do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 2)
    stall(500_000)

    # call 1 is sampled, call 2 is not: both end at their deadline
    for _ <- 1..2 do
      t0 = System.monotonic_time()
      assert {:error, %Error{reason: :timeout}} = HexagonTpu.predict(m, [input()], timeout: 50)
      assert ms_since(t0) < 400
    end

    stall(0)
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "a sampled call keeps the call's :priority", %{path: path, base: base} do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 1)
    before = profiled()
    x = input()
    # the first holds the graph, stalled until the test ends it (a cancel aborts its execute),
    # so the other two queue behind it whatever the machine's speed: each step waits on a
    # counter, never a clock; then the high-priority call goes before the low one
    assert wait_quiet()
    stall(60_000_000)
    {:ok, holder} = HexagonTpu.predict_async(m, [x], output: :binary)
    assert wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end, 60_000)
    low = Task.async(fn -> HexagonTpu.predict(m, [x], priority: :low, stats: true) end)
    assert wait_until(fn -> HexagonTpu.stats().executes_waiting >= 1 end, 60_000)
    high = Task.async(fn -> HexagonTpu.predict(m, [x], priority: :high, stats: true) end)
    assert wait_until(fn -> HexagonTpu.stats().executes_waiting >= 2 end, 60_000)
    # the two behind it have not reached graphExecute: they run without the stall
    stall(0)
    :ok = HexagonTpu.Call.cancel(holder)
    assert {:ok, _, low_stats} = Task.await(low, 60_000)
    assert {:ok, _, high_stats} = Task.await(high, 60_000)
    assert high_stats.execute_start_ns < low_stats.execute_start_ns
    # the two that ran were sampled; the holder's execute was aborted, so it has no profile
    assert profiled() == before + 2
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "with profile_every set, a batch keeps its :timeout and is sampled", %{
    path: path,
    base: base
  } do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 1000)
    x = input()
    before = profiled()
    # call 1 carries the profile (a batch's first chunk); the next 999 do not
    assert {:ok, [_]} = HexagonTpu.predict_batch(m, [x <> x], output: :binary)
    assert profiled() == before + 1
    assert_batch_times_out(m, x)
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "a sampled batch keeps its :timeout", %{path: path, base: base} do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 1)
    x = input()
    assert_batch_times_out(m, x)
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "predict_async/await, stream and SharedIO executes are sampled", %{path: path, base: base} do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 1)
    {:ok, plain} = HexagonTpu.load_model(path, backend: :reference)
    x = input()
    want = HexagonTpu.predict!(plain, [x], output: :binary)
    before = profiled()
    {:ok, call} = HexagonTpu.predict_async(m, [x], output: :binary)
    assert {:ok, ^want} = HexagonTpu.await(call)
    assert profiled() == before + 1

    results = m |> HexagonTpu.stream([[x], [x], [x]], output: :binary) |> Enum.to_list()
    assert results == List.duplicate({:ok, want}, 3)
    assert profiled() == before + 4

    {:ok, io} = HexagonTpu.Graph.alloc_io(m)
    :ok = HexagonTpu.SharedIO.write_input(io, 0, x)
    assert {:ok, ^io} = HexagonTpu.Graph.execute(m, io)
    assert profiled() == before + 5
    HexagonTpu.SharedIO.close(io)
    HexagonTpu.close(m)
    HexagonTpu.close(plain)
    no_leaks(base)
  end

  test "a backend without profiling is refused at load, naming the capability", %{
    path: path,
    base: base
  } do
    ref_capability(1401, 1000)

    assert {:error, %Error{reason: :unsupported, message: msg}} =
             HexagonTpu.load_model(path, backend: :reference, profile_every: 2)

    assert msg =~
             "HexagonTpu.load_model/2: profile_every: the backend does not announce " <>
               "profiling (capability 1401"

    # without sampling the same backend serves as ever
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference)
    for _ <- 1..3, do: assert({:ok, _} = HexagonTpu.predict(m, [input()], output: :binary))
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "a level the backend does not announce is refused at load (optrace without 1405)",
       %{path: path, base: base} do
    ref_capability(1405, 1000)

    assert {:error, %Error{reason: :unsupported, message: msg}} =
             HexagonTpu.load_model(path,
               backend: :reference,
               profile_every: 2,
               profile_level: :optrace
             )

    assert msg =~ "capability 1405, QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG"
    # the levels it does give load
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 2)
    for _ <- 1..4, do: assert({:ok, _} = HexagonTpu.predict(m, [input()], output: :binary))
    HexagonTpu.close(m)
    NIF.ref_control(ref_backend_lib(), :reset_capabilities)

    {:ok, m} =
      HexagonTpu.load_model(path, backend: :reference, profile_every: 2, profile_level: :optrace)

    for _ <- 1..2, do: assert({:ok, _} = HexagonTpu.predict(m, [input()], output: :binary))
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "the linting level on a backend that is not HTP is refused at load", %{base: base} do
    # before, the load succeeded and every sampled call then failed with :unsupported
    cpu = build_file!("meta backend_id=3\n" <> @nameless, "nameless_cpu")

    rt =
      Runtime.open!(backend: :reference, env: [{"HTPU_REF_PROVIDERS", "CPU_REF:3:2.32.0:5.42.0"}])

    assert {:error, %Error{reason: :unsupported, message: msg}} =
             HexagonTpu.load_model(cpu, runtime: rt, profile_every: 1, profile_level: :linting)

    assert msg =~ "profile_level: :linting is HTP's own level"
    # the detailed level works there, sampled calls included
    {:ok, m} = HexagonTpu.load_model(cpu, runtime: rt, profile_every: 1)
    x = for v <- 1..8, into: <<>>, do: <<v * 1.0::float-32-native>>
    assert {:ok, [_]} = HexagonTpu.predict(m, [x], output: :binary)
    HexagonTpu.close(m)
    Runtime.close(rt)
    no_leaks(base)
  end

  test "a profile that cannot be read: the call succeeds, the sample is dropped and counted",
       %{path: path, base: base} do
    rt =
      Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", "profileGetEvents:1:1002:3"}])

    {:ok, m} = HexagonTpu.load_model(path, runtime: rt, profile_every: 1)
    {:ok, plain} = HexagonTpu.load_model(path, backend: :reference)
    x = input()
    want = HexagonTpu.predict!(plain, [x], output: :binary)
    s0 = HexagonTpu.stats()

    log =
      capture_log(fn ->
        assert {:ok, ^want} = HexagonTpu.predict(m, [x], output: :binary)
        {:ok, call} = HexagonTpu.predict_async(m, [x], output: :binary)
        assert {:ok, ^want} = HexagonTpu.await(call)
      end)

    assert log =~ "a sampled detailed profile could not be read and was dropped"
    assert log =~ "profiles_dropped"
    s1 = HexagonTpu.stats()
    assert s1.profiles_dropped == s0.profiles_dropped + 2
    assert s1.profiled_calls == s0.profiled_calls
    # a deliberate measurement whose read fails is an error (the third injected failure)
    assert {:error, %Error{message: msg}} = HexagonTpu.profile(m, [x], runs: 1)
    assert msg =~ "could not be read"
    # the next read works again
    assert {:ok, ^want} = HexagonTpu.predict(m, [x], output: :binary)
    assert HexagonTpu.stats().profiled_calls == s0.profiled_calls + 1
    HexagonTpu.close(m)
    HexagonTpu.close(plain)
    Runtime.close(rt)
    no_leaks(base)
  end

  test "a sampled call on a graph of short calls stays on the short path", %{base: base} do
    # before, every sampled call left the normal scheduler for the graph's worker; on a graph
    # near the short-call limit that moved the next calls off the short path too. The model
    # runs scheduler: :normal, the short path without :auto's duration check: under :auto a
    # call preempted past the 200 us limit on a loaded host would move the graph off it, and
    # the test would measure the host, not the path a sampled call takes.
    path = build_file!(@nameless, "nameless_short")

    {:ok, m} =
      HexagonTpu.load_model(path, backend: :reference, profile_every: 2, scheduler: :normal)

    x = for v <- 1..8, into: <<>>, do: <<v * 1.0::float-32-native>>
    before = profiled()

    stats =
      for _ <- 1..80 do
        {:ok, [_], st} = HexagonTpu.predict(m, [x], output: :binary, stats: true)
        st
      end

    assert profiled() == before + 40
    # calls 1, 3, 5, ... are sampled: they run on the caller's normal scheduler as the others
    sampled_late = stats |> Enum.drop(70) |> Enum.take_every(2)
    assert Enum.map(sampled_late, & &1.scheduler) == List.duplicate(:normal, 5)
    HexagonTpu.close(m)
    no_leaks(base)
  end

  test "a binary without op names: its ops are numbered", %{base: base} do
    path = build_file!(@nameless, "nameless_callpath")
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference)
    x = for v <- 1..8, into: <<>>, do: <<v * 1.0::float-32-native>>
    assert {:ok, p} = HexagonTpu.profile(m, [x], runs: 2)
    assert Enum.sort(Enum.map(p.ops, & &1.name)) == ["#0", "#1", "#2"]
    assert p.note =~ "no op names"
    HexagonTpu.close(m)
    no_leaks(base)
  end

  describe "telemetry" do
    @describetag :telemetry
    @describetag skip: HexagonTpu.TestModels.optional_skip(:telemetry)

    setup do
      test = self()
      id = "#{inspect(test)}-#{System.unique_integer()}"
      events = [[:hexagon_tpu, :profile], [:hexagon_tpu, :profile, :dropped]]
      :ok = :telemetry.attach_many(id, events, &__MODULE__.forward/4, test)
      on_exit(fn -> :telemetry.detach(id) end)
      :ok
    end

    test "async, stream, batch and SharedIO samples emit their profiles", %{
      path: path,
      base: base
    } do
      {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 1)
      x = input()
      {:ok, call} = HexagonTpu.predict_async(m, [x])
      {:ok, _} = HexagonTpu.await(call)
      assert_receive {:event, [:hexagon_tpu, :profile], %{accel_cycles: c}, %{chunks: 1} = meta}
      assert c > 0 and length(meta.ops) == 100
      [_, _] = m |> HexagonTpu.stream([[x], [x]]) |> Enum.to_list()
      for _ <- 1..2, do: assert_receive({:event, [:hexagon_tpu, :profile], _, %{chunks: 1}})
      {:ok, _} = HexagonTpu.predict_batch(m, [x <> x <> x])
      assert_receive {:event, [:hexagon_tpu, :profile], _, %{chunks: 3, graph: "chain100"}}
      {:ok, io} = HexagonTpu.Graph.alloc_io(m)
      {:ok, _} = HexagonTpu.Graph.execute(m, io)
      assert_receive {:event, [:hexagon_tpu, :profile], _, %{chunks: 1}}
      HexagonTpu.SharedIO.close(io)
      refute_receive {:event, [:hexagon_tpu, :profile], _, _}, 100
      HexagonTpu.close(m)
      no_leaks(base)
    end

    test "a dropped profile is reported as [:hexagon_tpu, :profile, :dropped]", %{
      path: path,
      base: base
    } do
      rt =
        Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", "profileGetEvents:1:1002"}])

      {:ok, m} = HexagonTpu.load_model(path, runtime: rt, profile_every: 1, profile_level: :basic)

      capture_log(fn ->
        assert {:ok, _} = HexagonTpu.predict(m, [input()], output: :binary)
      end)

      assert_receive {:event, [:hexagon_tpu, :profile, :dropped], %{count: 1},
                      %{graph: "chain100", level: :basic, error: %Error{message: msg}}}

      assert msg =~ "could not be read"
      refute_receive {:event, [:hexagon_tpu, :profile], _, _}, 100
      assert {:ok, _} = HexagonTpu.predict(m, [input()], output: :binary)
      assert_receive {:event, [:hexagon_tpu, :profile], _, %{level: :basic}}
      HexagonTpu.close(m)
      Runtime.close(rt)
      no_leaks(base)
    end

    test "a binary without op names: sampled ops are numbered, the note says why", %{base: base} do
      path = build_file!(@nameless, "nameless_callpath_tel")
      {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 1)
      x = for v <- 1..8, into: <<>>, do: <<v * 1.0::float-32-native>>
      {:ok, _} = HexagonTpu.predict(m, [x])
      assert_receive {:event, [:hexagon_tpu, :profile], _, %{ops: ops, note: note}}
      assert Enum.sort(Enum.map(ops, & &1.name)) == ["#0", "#1", "#2"]
      assert note =~ "no op names"
      HexagonTpu.close(m)
      no_leaks(base)
    end
  end

  def forward(event, measurements, metadata, test),
    do: send(test, {:event, event, measurements, metadata})
end
