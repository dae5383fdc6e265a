defmodule HexagonTpu.NifRobustnessTest do
  # Races and lifetimes of the NIF glue (c_src/): borrowed core memory, the runtime link, and
  # loading a different copy of the library. Not async: the last test reloads the NIF module.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Graph, NIF, Runtime, SharedIO}

  setup_all do
    {:ok, _} = Application.ensure_all_started(:logger)
    %{add: build!(add_f32()), mixed: build!(mixed())}
  end

  defp runtime(opts \\ []), do: Runtime.open!([backend: :reference] ++ opts)

  test "alloc_io racing a close of the same graph from another process never crashes",
       %{mixed: bin} do
    base = settle()
    rt = runtime()

    for round <- 1..150 do
      ctx = Context.load!(rt, {:binary, bin})
      # per_axis_in has per-axis scales/zero points: the deepest copy the slots make
      name = if rem(round, 2) == 0, do: "per_axis_in", else: "two_out"
      g = Graph.open!(ctx, graph: name)
      Context.close(ctx)
      parent = self()

      closer =
        spawn(fn ->
          receive do
            :go -> :ok
          end

          Graph.close(g)
          send(parent, :closed)
        end)

      allocs =
        for _ <- 1..3 do
          Task.async(fn ->
            send(closer, :go)
            Graph.alloc_io(g)
          end)
        end

      for result <- Task.await_many(allocs) do
        case result do
          {:ok, %SharedIO{} = io} ->
            # Slots were copied from the graph resource, not from the (maybe freed) core info.
            assert [_ | _] = io.inputs
            assert Enum.all?(io.inputs ++ io.outputs, &is_binary(&1.name))
            SharedIO.close(io)

          {:error, %HexagonTpu.Error{reason: :closed}} ->
            :ok
        end
      end

      assert_receive :closed, 5_000
      assert {:error, %HexagonTpu.Error{reason: :closed}} = Graph.alloc_io(g)
    end

    Runtime.close(rt)
    assert settle().live_graphs == base.live_graphs
  end

  test "a fallback's note is right however the %Runtime{} term fared", %{add: bin} do
    # The runtime term lives only in the task; the model outlives it (the C core keeps the
    # runtime alive through the graph). The note comes from the buffer itself, so neither a
    # reason known before the term died nor one that first appears after it is lost.
    holder =
      Task.async(fn ->
        rt = runtime(fastrpc_library: "/nonexistent/libcdsprpc.so")
        HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      end)

    model = Task.await(holder)
    # The task is gone: collect everything so the runtime resource's destructor runs.
    settle()

    # The fallback is logged once per runtime (device_test.exs has the wording).
    {{:ok, io}, log} = with_log(fn -> Graph.alloc_io(model) end)
    assert log =~ "shared IO uses ordinary memory" and log =~ "/nonexistent/libcdsprpc.so"
    refute io.fastrpc
    assert io.note =~ "/nonexistent/libcdsprpc.so"
    SharedIO.close(io)

    # FastRPC memory works on this runtime until, after its term is gone, an allocation fails.
    holder2 =
      Task.async(fn ->
        rt = runtime()
        HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      end)

    model2 = Task.await(holder2)
    settle()

    {:ok, ok_io} = Graph.alloc_io(model2)
    assert ok_io.fastrpc
    assert ok_io.note == nil
    SharedIO.close(ok_io)

    {{:ok, io2}, log} =
      with_log(fn -> Graph.alloc_io(model2, env: [{"HTPU_REF_RPCMEM_FAIL", "1"}]) end)

    assert log =~ ~r/shared IO uses ordinary memory.*rpcmem_alloc of \d+ bytes failed/
    refute io2.fastrpc
    assert io2.note =~ ~r/rpcmem_alloc of \d+ bytes failed/
    SharedIO.close(io2)

    {:ok, [y]} = add(model2)

    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    Graph.close(model)
    Graph.close(model2)
  end

  test "the note is kept after Runtime.close/1 while graphs still use the runtime",
       %{add: bin} do
    rt = runtime(fastrpc_library: "/nonexistent/libcdsprpc.so")
    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
    Runtime.close(rt)
    {{:ok, io}, log} = with_log(fn -> Graph.alloc_io(model) end)
    assert log =~ "shared IO uses ordinary memory" and log =~ "/nonexistent/libcdsprpc.so"
    assert io.note =~ "/nonexistent/libcdsprpc.so"
    SharedIO.close(io)
    Graph.close(model)
  end

  # A stub of HexagonTpu.NIF whose on_load loads `path`: every NIF function exists, so ERTS
  # gets as far as the library's upgrade callback.
  defp stub_beam(path) do
    funs =
      for {name, arity} <- NIF.__info__(:functions), name != :load_nif do
        args = Enum.map_join(1..arity//1, ", ", &"_A#{&1}")
        "'#{name}'(#{args}) -> erlang:nif_error(not_loaded)."
      end

    exports = Enum.map_join(NIF.__info__(:functions), ", ", fn {n, a} -> "'#{n}'/#{a}" end)

    src = """
    -module('Elixir.HexagonTpu.NIF').
    -export([#{exports}]).
    -on_load(load_nif/0).
    load_nif() ->
        R = erlang:load_nif("#{path}", 0),
        persistent_term:put(htpu_stub_load_result, R),
        R.
    #{Enum.join(funs, "\n")}
    """

    dir = tmp_dir!()
    erl = Path.join(dir, "stub_nif.erl")
    File.write!(erl, src)
    {:ok, _, beam} = :compile.file(String.to_charlist(erl), [:binary, :report_errors])
    beam
  end

  # The public functions check all of these first; the NIF answers the same values with an
  # error naming what it takes, never a badarg raised out of a function that returns errors.
  test "values the NIF cannot take are :invalid_argument errors, never a raise", %{add: bin} do
    bad_runtime_options = [
      {%{backend_id: 2 ** 33}, "backend_id: expected an integer in 0..4294967295"},
      {%{startup_retries: 10 ** 30}, "startup_retries: expected an integer in 0..4294967295"},
      {%{startup_retry_delay_ms: 2 ** 40}, "startup_retry_delay_ms: expected an integer"},
      {%{recovery_retries: -1}, "recovery_retries: expected an integer in 0..4294967295"},
      {%{backend_lib: "a\0b"}, "backend_lib: expected nil or a string without NUL bytes"},
      {%{perf_profile: :turbo}, "perf_profile: expected nil or a performance profile name"},
      {%{env: [{"A=B", "1"}]}, "env: an entry is not {name, value | nil} with a non-empty name"},
      {%{env: [{"", "1"}]}, "env: an entry is not"},
      {%{env: [{"A", "x\0y"}]}, "env: the value of an entry is neither nil nor a string"},
      {%{env: for(i <- 1..17, do: {"HTPU_NIF_T#{i}", "1"})}, "env: more than 16 entries"},
      {%{env: [{"HTPU_NIF_T", "1"} | :tail]}, "env: not a proper list"},
      {:not_a_map, "expected a map of options"}
    ]

    for {options, message} <- bad_runtime_options do
      assert {:error, {:invalid_argument, msg, 0, nil}} = NIF.runtime_open(options)
      assert msg =~ message
    end

    g = HexagonTpu.load_model!({:binary, bin}, backend: :reference)

    assert {:error, {:invalid_argument, msg, 0, nil}} = NIF.graph_alloc_io(g.ref, [{"A=B", "1"}])

    assert msg =~ "alloc_io option env: an entry is not"
    HexagonTpu.close(g)

    default = NIF.max_binary_bytes()

    for n <- [2 ** 64, 2 ** 70, -1, :big] do
      assert {:error, {:invalid_argument, msg, 0, nil}} = NIF.set_max_binary_bytes(n)
      assert msg =~ "max_binary_bytes: expected an integer in 0..18446744073709551615"
    end

    assert NIF.max_binary_bytes() == default
  end

  test "an upgrade to a different copy of the library is refused; the old code keeps working",
       %{add: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    so = Path.join(:code.priv_dir(:hexagon_tpu), "hexagon_tpu_nif.so")
    copy_dir = tmp_dir!()
    copy = Path.join(copy_dir, "hexagon_tpu_nif_copy.so")
    File.cp!(so, copy)

    beam = stub_beam(Path.rootname(copy))
    # The code server logs the failed on_load as a warning (from a process of its own)
    {loaded, log} =
      with_awaited_log(~r/The on_load function for module Elixir.HexagonTpu.NIF returned/, fn ->
        :code.load_binary(NIF, ~c"stub_nif.beam", beam)
      end)

    assert loaded == {:error, :on_load_failure}
    assert log =~ "upgrade"

    # Refused by the library's upgrade callback (not, say, a missing file or function).
    assert {:error, {:upgrade, _}} = :persistent_term.get(:htpu_stub_load_result)
    :persistent_term.erase(:htpu_stub_load_result)

    # The old code and its library are still the current ones.
    assert :erlang.function_exported(NIF, :graph_execute, 4)

    assert {:ok, [y]} = add(model)

    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    assert {:ok, io} = Graph.alloc_io(model)
    SharedIO.close(io)
    HexagonTpu.close(model)

    # And the same library (same path) still upgrades in place.
    {NIF, nif_beam, file} = :code.get_object_code(NIF)
    assert {:module, NIF} = :code.load_binary(NIF, file, nif_beam)
    assert :code.soft_purge(NIF)
    model2 = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    assert {:ok, _} = HexagonTpu.predict(model2, add_inputs())
    HexagonTpu.close(model2)
  end
end
