defmodule HexagonTpu.LoadOptionsTest do
  # load_model/2's :priority and :timeout reach the core's load options: the context's QNN
  # priority config (read back from the reference backend, which records it), the load's bound
  # (a load stalled by latency injection), the context's default execute deadline. Stalls and
  # the graph state come from the reference backend's control API (process-wide): not async.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, NIF, Runtime}

  # a graph name of its own, so the backend's "newest live context with the graph" is ours
  @text String.replace(add_f32(), "graph add_f32", "graph load_opts_g")

  setup_all do
    %{bin: build!(@text)}
  end

  setup do
    on_exit(fn ->
      NIF.ref_control(ref_backend_lib(), {:set_latency, "contextCreateFromBinary", 0})
      NIF.ref_control(ref_backend_lib(), {:set_latency, "graphExecute", 0})
    end)
  end

  defp state, do: NIF.ref_control(ref_backend_lib(), {:graph_state, "load_opts_g"})

  # QNN_PRIORITY_* (QnnTypes.h)
  @qnn %{low: 0, normal: 100, normal_high: 150, high: 200}

  test ":priority is the context's QNN priority config", %{bin: bin} do
    rt = Runtime.open!(backend: :reference)
    assert Runtime.info(rt).priority_control

    for prio <- [:high, :low, :normal_high, :normal] do
      m = HexagonTpu.load_model!({:binary, bin}, runtime: rt, priority: prio)
      assert {:ok, %{context_priority: p}} = state()
      assert p == @qnn[prio], "#{prio}: QNN priority #{p}"
      HexagonTpu.close(m)
    end

    # a file as well as a binary
    path = Path.join(System.tmp_dir!(), "load_opts_#{System.unique_integer([:positive])}.bin")
    File.write!(path, bin)
    m = HexagonTpu.load_model!(path, runtime: rt, priority: :high)
    assert {:ok, %{context_priority: 200}} = state()
    HexagonTpu.close(m)
    File.rm!(path)

    assert {:error, %Error{reason: :invalid_option}} =
             HexagonTpu.load_model({:binary, bin}, runtime: rt, priority: :urgent)
  end

  test "a load stalled past its :timeout returns :timeout; without one it completes", %{bin: bin} do
    rt = Runtime.open!(backend: :reference)
    assert Runtime.info(rt).load_signals
    :ok = NIF.ref_control(ref_backend_lib(), {:set_latency, "contextCreateFromBinary", 1_500_000})
    t0 = System.monotonic_time(:millisecond)

    assert {:error, %Error{reason: :timeout} = e} =
             HexagonTpu.load_model({:binary, bin}, runtime: rt, timeout: 200)

    # the old code waited for the whole 1.5 s stall
    assert System.monotonic_time(:millisecond) - t0 < 1_200
    assert e.message =~ "200 ms"
    :ok = NIF.ref_control(ref_backend_lib(), {:set_latency, "contextCreateFromBinary", 0})
    m = HexagonTpu.load_model!({:binary, bin}, runtime: rt, timeout: 200)
    assert {:ok, _} = HexagonTpu.predict(m, [<<0::128>>, <<0::128>>])
    HexagonTpu.close(m)
  end

  test "the load's :timeout is the default deadline of the context's executes", %{bin: bin} do
    rt = Runtime.open!(backend: :reference)
    m = HexagonTpu.load_model!({:binary, bin}, runtime: rt, timeout: 200)
    :ok = NIF.ref_control(ref_backend_lib(), {:set_latency, "graphExecute", 1_500_000})
    # straight to the core: a dirty IO call with no deadline of its own
    assert {:error, {:timeout, msg, _, _}} =
             NIF.graph_execute(m.ref, [{<<0::128>>, :f32}, {<<0::128>>, :f32}], [:f32], nil)

    assert msg =~ "200 ms"
    :ok = NIF.ref_control(ref_backend_lib(), {:set_latency, "graphExecute", 0})
    HexagonTpu.close(m)
  end
end
