defmodule HexagonTpu.TestModels do
  @moduledoc false
  # Reference models for the tests, built on the fly with priv/htpu-refbuild
  # (docs/reference-format.md), and small helpers shared by the test modules.

  import ExUnit.Assertions, only: [assert_receive: 3, flunk: 1]
  alias HexagonTpu.Runtime

  @add_f32 """
  graph add_f32
    input a f32 [1,4]
    input b f32 [1,4]
    output y f32 [1,4]
    op ElementWiseAdd a b -> y
  """

  # Per-tensor u8 with a static operand; two graphs in one context.
  @two_graphs @add_f32 <>
                """
                graph scale_u8
                  input x u8 [1,4] scale=0.1 zero_point=128
                  static s u8 [1,4] scale=0.02 zero_point=0 data=[50,100,150,200]
                  output y u8 [1,4] scale=0.1 zero_point=128
                  op ElementWiseMultiply x s -> y
                """

  # y = relu-free FullyConnected(x, w, b) with per-axis u8 weights and an i32 bias; f16, i8,
  # u16 and i16 graphs; a float32 graph with two outputs.
  @mixed """
  graph fc_u8
    input x u8 [1,3] scale=0.5 zero_point=10
    static w u8 [2,3] axis=0 scales=[0.25,0.5] zero_points=[4,8] data=[8,4,4,10,8,6]
    static b i32 [2] scale=0.125 zero_point=0 data=[8,-16]
    output y u8 [1,2] scale=0.25 zero_point=2
    op FullyConnected x w b -> y
  graph relu_f16
    input p f16 [4]
    output q f16 [4]
    op Relu p -> q
  graph relu_i8
    input m i8 [4] scale=0.1 zero_point=-5
    output n i8 [4] scale=0.1 zero_point=-5
    op Relu m -> n
  graph add_u16
    input a u16 [2,2] scale=0.01 zero_point=1000
    input b u16 [2,2] scale=0.01 zero_point=1000
    output y u16 [2,2] scale=0.02 zero_point=500
    op ElementWiseAdd a b -> y
  graph relu_i16
    input a i16 [3] scale=0.001 zero_point=0
    output y i16 [3] scale=0.001 zero_point=0
    op Relu a -> y
  graph two_out
    input a f32 [2]
    input b f32 [2]
    output s f32 [2]
    output p f32 [2]
    op ElementWiseAdd a b -> s
    op ElementWiseMultiply a b -> p
  graph per_axis_in
    input x u8 [2,3] axis=0 scales=[0.5,0.25] zero_points=[1,2]
    output y f32 [2,3]
    op Relu x -> y
  """

  # Inputs that cannot be swapped unnoticed: ab is y = a + b with a and b quantized
  # differently; abc is y = (a + b) * c with c of another shape ([1,1], broadcast) and type
  # (f32). For the answer paths that carry several inputs per row (batches, the serving).
  @ab_abc """
  graph ab
    input a u8 [1,4] scale=0.1 zero_point=128
    input b u8 [1,4] scale=0.5 zero_point=0
    output y f32 [1,4]
    op ElementWiseAdd a b -> y
  graph abc
    input a u8 [1,4] scale=0.1 zero_point=128
    input b u8 [1,4] scale=0.5 zero_point=0
    input c f32 [1,1]
    native s f32 [1,4]
    output y f32 [1,4]
    op ElementWiseAdd a b -> s
    op ElementWiseMultiply s c -> y
  """

  @doc "Graphs of batch 4 and 2 for predict_batch/3, and one whose tensors do not share a batch."
  def batch_models do
    """
    graph add_b4
      input a f32 [4,3]
      input b f32 [4,3]
      output y f32 [4,3]
      op ElementWiseAdd a b -> y
    graph scale_b2
      input x u8 [2,2] scale=0.1 zero_point=128
      static s u8 [1,2] scale=0.02 zero_point=0 data=[50,100]
      output y u8 [2,2] scale=0.1 zero_point=128
      op ElementWiseMultiply x s -> y
    graph flatten
      input x f32 [2,3]
      output y f32 [6]
      op Reshape x -> y
    """
  end

  def add_f32, do: @add_f32
  def ab_abc, do: @ab_abc
  def two_graphs, do: @two_graphs
  def mixed, do: @mixed

  @doc "Builds a model from its text; returns the binary."
  def build!(text) do
    dir = tmp_dir!()
    name = "m#{System.unique_integer([:positive])}"
    src = Path.join(dir, name <> ".txt")
    out = Path.join(dir, name <> ".bin")
    File.write!(src, text)

    {msg, status} =
      System.cmd(Runtime.priv_path("htpu-refbuild"), [src, out], stderr_to_stdout: true)

    if status != 0, do: raise("htpu-refbuild failed: #{msg}")
    bin = File.read!(out)
    File.rm!(src)
    File.rm!(out)
    bin
  end

  @doc "Builds a model from its text into a file; returns the path."
  def build_file!(text, name \\ nil) do
    path = Path.join(tmp_dir!(), (name || "m#{System.unique_integer([:positive])}") <> ".bin")
    File.write!(path, build!(text))
    path
  end

  def tmp_dir! do
    dir = Path.join(System.tmp_dir!(), "hexagon_tpu_test_#{System.pid()}")
    File.mkdir_p!(dir)
    dir
  end

  @doc "Inputs of the `add_f32` graph: [1, 2, 3, 4] + [1, 1, 1, 1] = [2, 3, 4, 5]."
  def add_inputs, do: [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])]

  @doc "Runs the `add_f32` graph on `add_inputs/0`, outputs as binaries; `opts` go to predict/3."
  def add(model, opts \\ []),
    do: HexagonTpu.predict(model, add_inputs(), Keyword.merge([output: :binary], opts))

  def f32(list), do: for(x <- list, into: <<>>, do: <<x::float-32-native>>)
  def from_f32(bin), do: for(<<x::float-32-native <- bin>>, do: x)

  def assert_close(got, want, tol \\ 1.0e-5) do
    ok =
      length(got) == length(want) and
        Enum.all?(Enum.zip(got, want), fn {g, w} -> abs(g - w) <= tol end)

    if !ok,
      do: raise(ExUnit.AssertionError, message: "expected #{inspect(want)}, got #{inspect(got)}")

    true
  end

  @doc """
  Polls the live counters until they equal `baseline` (collecting garbage in every process
  and letting the reaper drain between polls) or `timeout_ms` passes; returns the last
  reading. Use it to assert a return to a baseline: a process of the test (or of ExUnit) that
  is still exiting releases its handles a little later, and a fixed sleep would race it.
  """
  def wait_for_live(baseline, timeout_ms \\ 5000) do
    deadline = System.monotonic_time(:millisecond) + timeout_ms
    do_wait(baseline, deadline)
  end

  defp do_wait(baseline, deadline) do
    gc_all()
    # only the counters the baseline names
    live = Map.take(live(), Map.keys(baseline))

    cond do
      live == baseline and reaper_drained?() -> live
      System.monotonic_time(:millisecond) > deadline -> live
      true -> Process.sleep(5) && do_wait(baseline, deadline)
    end
  end

  @doc """
  Waits until garbage collection and the reaper are quiet - every queued handle closed and the
  live counters unchanged over `stable` consecutive polls 10 ms apart (the exit of the previous
  test's processes, linked tasks included, is asynchronous to the next test's start) - and
  returns the live counters. Gives up after `timeout_ms` and returns the last reading. For a
  baseline; to assert a return to one, use `wait_for_live/2`.
  """
  def settle(timeout_ms \\ 5000, stable \\ 3) do
    deadline = System.monotonic_time(:millisecond) + timeout_ms
    do_settle(nil, 0, stable, deadline)
  end

  defp do_settle(prev, count, stable, deadline) do
    gc_all()
    now = live()
    count = if now == prev and reaper_drained?(), do: count + 1, else: 0

    if count >= stable or System.monotonic_time(:millisecond) > deadline do
      now
    else
      Process.sleep(10)
      do_settle(now, count, stable, deadline)
    end
  end

  @doc """
  Polls `fun` every 2 ms until it returns a truthy value, which it returns; `nil` after
  `timeout_ms`. (No garbage collection of other processes here: `:erlang.garbage_collect/1`
  of a process in a dirty NIF waits for the NIF to return.)
  """
  def wait_until(fun, timeout_ms \\ 5000) do
    deadline = System.monotonic_time(:millisecond) + timeout_ms
    do_wait_until(fun, deadline)
  end

  defp do_wait_until(fun, deadline) do
    cond do
      value = fun.() ->
        value

      System.monotonic_time(:millisecond) > deadline ->
        nil

      true ->
        Process.sleep(2)
        do_wait_until(fun, deadline)
    end
  end

  @doc """
  Waits until no execute is in flight or waiting anywhere in the VM (calls a previous test
  left draining), so that a test reading those process-wide counters counts only its own.
  """
  def wait_quiet do
    wait_until(
      fn ->
        s = HexagonTpu.stats()
        s.executes_in_flight == 0 and s.executes_waiting == 0
      end,
      60_000
    )
  end

  defp gc_all, do: for(p <- Process.list(), do: :erlang.garbage_collect(p))

  defp reaper_drained? do
    s = HexagonTpu.stats()
    s.reaper_queued == s.reaper_closed
  end

  # The reference backend's test controls (c_src/ref_control.c, docs/reference-backend.md): they
  # act process-wide on the library the shared reference runtime loaded, so tests using them
  # are not async.
  def ref_backend_lib do
    {:ok, rt} = Runtime.shared(backend: :reference)
    Runtime.info(rt).backend_lib
  end

  # Every graphExecute from now on sleeps `usec` first (0: none).
  def stall(usec),
    do: :ok = HexagonTpu.NIF.ref_control(ref_backend_lib(), {:set_latency, "graphExecute", usec})

  # Every call of QNN `api` (e.g. "contextCreateFromBinary") sleeps `usec` first (0: none).
  def ref_latency(api, usec),
    do: :ok = HexagonTpu.NIF.ref_control(ref_backend_lib(), {:set_latency, api, usec})

  # Every graphExecute of the graph called `name` sleeps `usec` (0: none); the others do not.
  def graph_latency(name, usec),
    do: :ok = HexagonTpu.NIF.ref_control(ref_backend_lib(), {:set_graph_latency, name, usec})

  # The backend answers `answer` when asked for capability `key` (reset_ref_controls/0 undoes).
  def ref_capability(key, answer),
    do: :ok = HexagonTpu.NIF.ref_control(ref_backend_lib(), {:set_capability, key, answer})

  # No stall, every capability as the backend announces it: for a test's on_exit.
  def reset_ref_controls do
    stall(0)
    :ok = HexagonTpu.NIF.ref_control(ref_backend_lib(), :disarm)
    :ok = HexagonTpu.NIF.ref_control(ref_backend_lib(), :reset_capabilities)
  end

  def live do
    s = HexagonTpu.stats()
    Map.take(s, [:live_runtimes, :live_contexts, :live_graphs, :live_shared_buffers])
  end

  @doc """
  Runs `fun` and waits for a log event whose text matches `pattern`, from whatever process
  logs it and however late (the code server logs a failed on_load from a process of its own,
  after the load has returned, so ExUnit.CaptureLog could miss it): a primary :logger filter
  takes the event before any handler prints it and hands it to this process. Returns
  `{fun's result, the event's text}`. Events that do not match pass through untouched.
  """
  def with_awaited_log(pattern, fun) do
    id = :"htpu_await_log_#{System.unique_integer([:positive])}"
    :ok = :logger.add_primary_filter(id, {&__MODULE__.take_log/2, {self(), id, pattern}})

    try do
      result = fun.()
      assert_receive {^id, text}, 5_000, "no log event matching #{inspect(pattern)}"
      {result, text}
    after
      :logger.remove_primary_filter(id)
    end
  end

  @doc false
  # The filter of with_awaited_log/2, run in the logging process.
  def take_log(%{msg: msg, meta: meta}, {pid, id, pattern}) do
    text = log_text(msg, meta)

    if text =~ pattern do
      send(pid, {id, text})
      :stop
    else
      :ignore
    end
  end

  # error_logger's messages (the code server's among them) are reports of a format and its
  # arguments; other reports say how to print themselves (report_cb/1).
  defp log_text({:string, chardata}, _), do: IO.chardata_to_string(chardata)
  defp log_text({:report, %{format: f, args: a}}, _), do: log_text({f, a}, nil)

  defp log_text({:report, report}, %{report_cb: cb}) when is_function(cb, 1),
    do: log_text(cb.(report), nil)

  defp log_text({:report, report}, _), do: inspect(report)
  defp log_text({format, args}, _), do: IO.chardata_to_string(:io_lib.format(format, args))

  @doc """
  `false` when the optional application `app` (`:nx`, `:telemetry`) is started, as
  hexagon_tpu's optional applications are when present; otherwise the reason to skip the
  tests that need it (`@moduletag skip: optional_skip(:nx)`). test/test_helper.exs fails the
  run instead when HTPU_REQUIRE_OPTIONAL=1.
  """
  def optional_skip(app) do
    cond do
      List.keymember?(Application.started_applications(), app, 0) ->
        false

      Application.spec(app, :vsn) != nil or :code.lib_dir(app) != {:error, :bad_name} ->
        "#{app} is present but not started"

      true ->
        "#{app} is not loadable (add {:#{app}, ...} to a project that uses hexagon_tpu)"
    end
  end
end
