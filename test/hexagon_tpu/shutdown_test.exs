defmodule HexagonTpu.ShutdownTest do
  # Not async: close_all/0 closes every handle of this VM.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Runtime, SharedIO}

  # The reference libraries report on stderr what is still open when they are unloaded at
  # process exit ("N QNN handle(s) still alive at unload", and the same for system contexts
  # and FastRPC allocations; "N graphExecute call(s) still running at unload: QNN handles left
  # alive" when an execute had not even returned).
  @leak_report ~r/still alive at unload|still running at unload/

  # Runs `code` in a fresh VM on this build, the way a user runs a script; returns its output
  # (stdout and stderr) and exit status.
  defp run_script(code) do
    elixir = System.find_executable("elixir") || flunk("elixir is not on PATH")
    ebin = Path.join(Mix.Project.app_path(), "ebin")
    System.cmd(elixir, ["-pa", ebin, "-e", code], stderr_to_stdout: true)
  end

  # What each script leaves open: a model in the script's own binding (garbage once the script
  # is done), a runtime the script opened itself, and a model, its shared IO buffer and a
  # zero-copy view of an output held by a process that is still alive when the VM stops.
  defp leave_open(path) do
    """
    path = #{inspect(path)}
    a = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-native>>
    {:ok, model} = HexagonTpu.load_model(path, backend: :reference)
    {:ok, [_]} = HexagonTpu.predict(model, [a, a], output: :binary)
    {:ok, _own} = HexagonTpu.Runtime.open(backend: :reference)
    parent = self()

    spawn(fn ->
      {:ok, held} = HexagonTpu.load_model(path, backend: :reference)
      {:ok, io} = HexagonTpu.alloc_io(held)
      :ok = HexagonTpu.SharedIO.write_inputs(io, [a, a])
      {:ok, ^io} = HexagonTpu.predict(held, io)
      {:ok, view} = HexagonTpu.SharedIO.read_output(io, 0, view: true, output: :binary)
      send(parent, {:holding, byte_size(view)})
      Process.sleep(:infinity)
    end)

    receive do
      {:holding, 16} -> IO.puts("holding")
    end
    """
  end

  test "a script that leaves its models to the VM ends with nothing open" do
    {out, status} = run_script(leave_open(build_file!(add_f32())))
    assert status == 0, out
    assert out =~ "holding"
    refute out =~ @leak_report, out
  end

  test "System.stop/0 closes what is still open when it stops the application" do
    # Not the end of the script (it never ends): the application's stop does the closing.
    code =
      leave_open(build_file!(add_f32())) <>
        """
        {:ok, _} = Application.ensure_all_started(:hexagon_tpu)
        System.stop(0)
        Process.sleep(:infinity)
        """

    {out, status} = run_script(code)
    assert status == 0, out
    assert out =~ "holding"
    refute out =~ @leak_report, out
  end

  test "System.stop/0 with calls in flight on a stalled graph: aborted, the VM stops at once" do
    # One execute stalled 30 s in the DSP (injected) and 6 more queued behind it, from two
    # processes; the stop must abort the running one and drop the queued ones instead of
    # waiting 30 s, and leave nothing open. The script does not start the application: the
    # first runtime's open does, and its prep_stop/1 closes the graph while the callers still
    # live. (Before, the closes came only from the destructors after init killed the callers,
    # racing its halt: on a loaded machine the calls' ends came after it, and the stalled
    # graph's runtime, 5 QNN handles, was reported open at unload.)
    code = """
    path = #{inspect(build_file!(add_f32()))}
    a = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-native>>
    {:ok, rt} =
      HexagonTpu.Runtime.open(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:30000000"}])
    {:ok, model} = HexagonTpu.load_model(path, runtime: rt)
    calls = for _ <- 1..4, do: elem(HexagonTpu.predict_async(model, [a, a], output: :binary), 1)
    spawn(fn ->
      for _ <- 1..3, do: HexagonTpu.predict_async(model, [a, a], output: :binary)
      Process.sleep(:infinity)
    end)
    Process.sleep(200)
    IO.puts("in flight: \#{length(calls)} + 3")
    t0 = System.monotonic_time(:millisecond)
    spawn(fn -> System.stop(0) end)
    receive do
      {:hexagon_tpu, _, answer} -> IO.puts("answer: \#{inspect(elem(answer, 0))} after \#{System.monotonic_time(:millisecond) - t0} ms")
    after
      20_000 -> IO.puts("no answer")
    end
    Process.sleep(:infinity)
    """

    t0 = System.monotonic_time(:millisecond)
    {out, status} = run_script(code)
    elapsed = System.monotonic_time(:millisecond) - t0
    assert status == 0, out
    assert out =~ "in flight: 4 + 3", out

    assert elapsed < 20_000,
           "the VM took #{elapsed} ms to stop with a 30 s stall in flight\n#{out}"

    refute out =~ @leak_report, out
  end

  test "System.stop/0 in a script that never started the application closes a model no process holds" do
    # `elixir -pa` starts no application and System.stop/0 runs no at-exit function: the close
    # comes from the application's prep_stop/1, which runs only because the first runtime's
    # open started the application. Before that, nothing closed what the processes init kills
    # do not hold (here a model in :persistent_term, with calls in flight on its stalled
    # graph; in the test above, the resources of calls whose abort had not ended yet on a
    # loaded machine): it reached the exit open, every time.
    code = """
    path = #{inspect(build_file!(add_f32()))}
    a = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-native>>
    {:ok, rt} =
      HexagonTpu.Runtime.open(backend: :reference, env: [{"HTPU_REF_LATENCY", "graphExecute:30000000"}])
    {:ok, model} = HexagonTpu.load_model(path, runtime: rt)
    :persistent_term.put(:held_model, model)
    parent = self()
    spawn(fn ->
      for _ <- 1..3, do: {:ok, _} = HexagonTpu.predict_async(model, [a, a], output: :binary)
      send(parent, :submitted)
      Process.sleep(:infinity)
    end)
    receive do
      :submitted -> :ok
    end
    started = List.keymember?(Application.started_applications(), :hexagon_tpu, 0)
    IO.puts("application started: \#{started}")
    System.stop(0)
    Process.sleep(:infinity)
    """

    t0 = System.monotonic_time(:millisecond)
    {out, status} = run_script(code)
    elapsed = System.monotonic_time(:millisecond) - t0
    assert status == 0, out
    refute out =~ @leak_report, out
    assert elapsed < 20_000, "the VM took #{elapsed} ms to stop\n#{out}"
    assert out =~ "application started: true", out
  end

  test "close_all/0 closes what is still referenced; later calls get :closed" do
    rt = Runtime.open!(backend: :reference)
    model = HexagonTpu.load_model!({:binary, build!(add_f32())}, runtime: rt)
    {:ok, io} = HexagonTpu.alloc_io(model)
    :ok = SharedIO.write_inputs(io, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])])
    {:ok, ^io} = HexagonTpu.predict(model, io)
    {:ok, view} = SharedIO.read_output(io, 0, view: true, output: :binary)
    {:ok, shared} = Runtime.shared(backend: :reference)

    assert :ok = HexagonTpu.close_all()

    assert {:error, %Error{reason: :closed}} =
             HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])])

    assert {:error, %Error{reason: :closed}} = SharedIO.read_output(io, 0)
    assert {:error, %Error{reason: :closed}} = Runtime.set_perf_profile(rt, :default)
    refute HexagonTpu.NIF.handle_alive(shared.ref)
    # the view keeps its memory, as after SharedIO.close/1
    assert from_f32(view) == [2.0, 3.0, 4.0, 5.0]
    assert :ok = HexagonTpu.close_all()

    # once the view is gone too, nothing is left (close_all closed other tests' leftovers too)
    view = nil
    _ = view
    nothing = %{live_runtimes: 0, live_contexts: 0, live_graphs: 0, live_shared_buffers: 0}
    assert wait_for_live(nothing) == nothing

    # the shared runtime is opened afresh for the next model
    assert {:ok, fresh} = Runtime.shared(backend: :reference)
    assert fresh.ref != shared.ref
    model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
    assert {:ok, [_]} = HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])])
    HexagonTpu.close(model)
  end
end
