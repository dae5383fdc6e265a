defmodule HexagonTpu.TelemetryTest do
  use ExUnit.Case, async: true

  # Runs only when :telemetry is present (and so started); reported as skipped, with the
  # reason, otherwise.
  @moduletag :telemetry
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:telemetry)
  @compile {:no_warn_undefined, [:telemetry]}

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Monitor}

  @events [
    [:hexagon_tpu, :execute, :start],
    [:hexagon_tpu, :execute, :stop],
    [:hexagon_tpu, :execute, :exception],
    [:hexagon_tpu, :load, :start],
    [:hexagon_tpu, :load, :stop],
    [:hexagon_tpu, :load, :exception],
    [:hexagon_tpu, :error],
    [:hexagon_tpu, :stats],
    [:hexagon_tpu, :model, :first_answer]
  ]

  setup_all do
    # (:telemetry itself was started with hexagon_tpu, its optional application)
    # for capture_log/1 (telemetry logs a detached handler)
    {:ok, _} = Application.ensure_all_started(:logger)
    %{bin: build!(add_f32())}
  end

  # Forwards the events emitted by this test process (other async tests execute too) or by an
  # unnamed Monitor to the test process.
  setup do
    test = self()
    id = "#{inspect(test)}-#{System.unique_integer()}"

    :ok = :telemetry.attach_many(id, @events, &__MODULE__.forward/4, test)

    on_exit(fn -> :telemetry.detach(id) end)
    :ok
  end

  # A function of this module, not a closure: :telemetry calls it directly (and logs nothing).
  def forward(name, measurements, meta, test) do
    # a Monitor started with name: nil emits from itself, as itself
    if self() == test or meta[:monitor] == self() do
      send(test, {:event, name, measurements, meta})
    end
  end

  def raise_in(_name, _measurements, _meta, test) do
    if self() == test, do: raise("handler bug")
  end

  # process-wide and only growing: a call of this test that went dirty has added to it
  defp declined do
    s = HexagonTpu.stats()

    s.normal_declined_busy + s.normal_declined_not_short + s.normal_declined_resource +
      s.normal_declined_other
  end

  test "each execute emits [:hexagon_tpu, :execute, :stop]: graphExecute time, status", %{
    bin: bin
  } do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    {:ok, _, %{execute_ns: ns}} = add(model, stats: true)

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], m, %{graph: "add_f32", status: :ok}}
    # duration is the graphExecute time (the C core's execute_ns) in native units
    assert m.duration == System.convert_time_unit(ns, :nanosecond, :native)
    assert m.execute_ns == ns
    assert m.call_duration >= m.duration
    assert is_integer(m.monotonic_time)

    for key <- [:quantize_ns, :dequantize_ns, :total_ns, :nif_ns],
        do: assert(is_integer(m[key]), "#{key}")

    # without stats: true as well
    {:ok, _} = add(model)
    assert_receive {:event, [:hexagon_tpu, :execute, :stop], %{duration: d}, %{status: :ok}}
    assert d >= 0
    refute_received {:event, [:hexagon_tpu, :error], _, _}
    HexagonTpu.close(model)
  end

  test "the stop event says which scheduler ran the call", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)

    {:ok, _, %{scheduler: :dirty_io}} = add(model, stats: true, scheduler: :dirty_io)

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], m,
                    %{status: :ok, scheduler: :dirty_io}}

    # metadata, not a measurement
    refute Map.has_key?(m, :scheduler)

    # :normal is a preference, not a guarantee: a call that would wait (the execute gate held
    # by another test's model load, say) goes dirty and is counted as declined. Either way the
    # event says where it ran.
    declined_before = declined()
    {:ok, _, %{scheduler: ran}} = add(model, stats: true, scheduler: :normal)
    assert ran in [:normal, :dirty_io]

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], m, %{status: :ok, scheduler: ^ran}}

    refute Map.has_key?(m, :scheduler)
    if ran == :dirty_io, do: assert(declined() > declined_before)

    {:error, _} = HexagonTpu.predict(model, [f32([1, 2, 3, 4])], scheduler: :normal)

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], _,
                    %{status: {:error, :mismatch}, scheduler: nil}}

    HexagonTpu.close(model)
  end

  test "a failed execute: stop with {:error, reason} and an [:hexagon_tpu, :error]", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    {:error, error} = HexagonTpu.predict(model, [f32([1, 2, 3, 4])])

    assert_receive {:event, [:hexagon_tpu, :execute, :start], _, %{telemetry_span_context: ref}}

    # no graphExecute time on an error: duration is the call's wall time
    assert_receive {:event, [:hexagon_tpu, :execute, :stop], %{duration: d, call_duration: d},
                    %{graph: "add_f32", status: {:error, :mismatch}, telemetry_span_context: ^ref}}

    assert_receive {:event, [:hexagon_tpu, :error], %{system_time: _},
                    %{operation: :execute, graph: "add_f32", reason: :mismatch, error: ^error}}

    HexagonTpu.close(model)
  end

  test "execute_span/2: start and stop share a telemetry_span_context; returns the result" do
    result = {:ok, []}

    assert HexagonTpu.Telemetry.execute_span("g", fn -> {result, %{execute_ns: 1000}} end) ==
             result

    assert_receive {:event, [:hexagon_tpu, :execute, :start],
                    %{monotonic_time: t0, system_time: _},
                    %{graph: "g", telemetry_span_context: ref}}

    assert is_reference(ref)

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], %{duration: d, monotonic_time: t1},
                    %{graph: "g", status: :ok, telemetry_span_context: ^ref}}

    assert d == System.convert_time_unit(1000, :nanosecond, :native)
    assert t1 >= t0

    # a second span has its own context
    HexagonTpu.Telemetry.execute_span("g", fn -> {result, nil} end)
    assert_receive {:event, [:hexagon_tpu, :execute, :start], _, %{telemetry_span_context: ref2}}
    assert ref2 != ref
  end

  test "an execute that raises emits :exception (not :stop) and is re-raised" do
    assert_raise ArgumentError, "bad", fn ->
      HexagonTpu.Telemetry.execute_span("g", fn -> raise ArgumentError, "bad" end)
    end

    assert_receive {:event, [:hexagon_tpu, :execute, :start], _, %{telemetry_span_context: ref}}

    assert_receive {:event, [:hexagon_tpu, :execute, :exception],
                    %{duration: d, monotonic_time: _},
                    %{
                      graph: "g",
                      telemetry_span_context: ^ref,
                      kind: :error,
                      reason: %ArgumentError{},
                      stacktrace: [_ | _]
                    }}

    assert d >= 0
    refute_received {:event, [:hexagon_tpu, :execute, :stop], _, _}
    refute_received {:event, [:hexagon_tpu, :error], _, _}

    # throws and exits too
    catch_throw(HexagonTpu.Telemetry.execute_span("g", fn -> throw(:t) end))
    assert_receive {:event, [:hexagon_tpu, :execute, :exception], _, %{kind: :throw, reason: :t}}
    catch_exit(HexagonTpu.Telemetry.execute_span("g", fn -> exit(:x) end))
    assert_receive {:event, [:hexagon_tpu, :execute, :exception], _, %{kind: :exit, reason: :x}}
  end

  test "Graph.execute/3 raising inside the span: :start is followed by :exception", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    # an Nx.Tensor-shaped struct that Nx cannot read (Nx absent, or not a real tensor)
    bogus = %{__struct__: Nx.Tensor, data: nil, type: {:f, 32}, shape: {1, 4}, names: []}

    try do
      HexagonTpu.predict(model, [bogus, bogus], output: :binary)
    rescue
      _ -> :raised
    end
    |> case do
      :raised ->
        assert_receive {:event, [:hexagon_tpu, :execute, :start], _,
                        %{telemetry_span_context: ref}}

        assert_receive {:event, [:hexagon_tpu, :execute, :exception], _,
                        %{graph: "add_f32", telemetry_span_context: ^ref, kind: :error}}

      {:error, %Error{}} ->
        # Nx not loaded: a plain returned error, paired by :stop
        assert_receive {:event, [:hexagon_tpu, :execute, :start], _,
                        %{telemetry_span_context: ref}}

        assert_receive {:event, [:hexagon_tpu, :execute, :stop], _,
                        %{telemetry_span_context: ^ref, status: {:error, _}}}
    end

    HexagonTpu.close(model)
  end

  test "load_span/2: start and stop with the graph and status; errors; exceptions", %{bin: bin} do
    loaded =
      HexagonTpu.Telemetry.load_span(%{source: :binary}, fn ->
        HexagonTpu.load_model({:binary, bin}, backend: :reference)
      end)

    assert {:ok, %HexagonTpu.Graph{} = model} = loaded
    HexagonTpu.close(model)

    assert_receive {:event, [:hexagon_tpu, :load, :start], %{monotonic_time: _},
                    %{source: :binary, telemetry_span_context: ref}}

    assert_receive {:event, [:hexagon_tpu, :load, :stop], %{duration: d},
                    %{
                      source: :binary,
                      graph: "add_f32",
                      status: :ok,
                      telemetry_span_context: ^ref
                    }}

    assert d > 0

    {:error, %Error{reason: :model} = e} =
      HexagonTpu.Telemetry.load_span(%{source: "bad.bin"}, fn ->
        HexagonTpu.load_model({:binary, "not a model"}, backend: :reference)
      end)

    assert_receive {:event, [:hexagon_tpu, :load, :stop], _,
                    %{source: "bad.bin", status: {:error, :model}}}

    assert_receive {:event, [:hexagon_tpu, :error], _,
                    %{operation: :load, reason: :model, error: ^e}}

    assert_raise RuntimeError, "boom", fn ->
      HexagonTpu.Telemetry.load_span(%{source: "x"}, fn -> raise "boom" end)
    end

    assert_receive {:event, [:hexagon_tpu, :load, :start], _,
                    %{source: "x", telemetry_span_context: xref}}

    assert_receive {:event, [:hexagon_tpu, :load, :exception], %{duration: _},
                    %{
                      source: "x",
                      kind: :error,
                      reason: %RuntimeError{},
                      stacktrace: [_ | _],
                      telemetry_span_context: ^xref
                    }}
  end

  test "load_models/2: one load span per model, its own graph and status; first answers" do
    # graph names of their own: a first answer is once per name since the application started
    name = "tl_#{System.unique_integer([:positive])}"
    bin = build!(String.replace(add_f32(), "graph add_f32", "graph #{name}"))

    {:ok, [{:ok, model}, {:error, %Error{reason: :io} = e}]} =
      HexagonTpu.load_models([{:binary, bin}, "/nonexistent/tl.bin"], backend: :reference)

    assert_receive {:event, [:hexagon_tpu, :load, :start], %{monotonic_time: _},
                    %{source: :binary, list_index: 0, list_size: 2, telemetry_span_context: r0}}

    assert_receive {:event, [:hexagon_tpu, :load, :start], _,
                    %{source: "/nonexistent/tl.bin", list_index: 1, telemetry_span_context: r1}}

    assert r0 != r1

    assert_receive {:event, [:hexagon_tpu, :load, :stop], %{duration: d},
                    %{graph: ^name, status: :ok, source: :binary, telemetry_span_context: ^r0}}

    # one list call: each model's duration is the call's
    assert_receive {:event, [:hexagon_tpu, :load, :stop], %{duration: ^d},
                    %{graph: nil, status: {:error, :io}, telemetry_span_context: ^r1}}

    assert_receive {:event, [:hexagon_tpu, :error], _,
                    %{operation: :load, reason: :io, graph: nil, error: ^e}}

    refute_received {:event, [:hexagon_tpu, :error], _, _}

    {:ok, _} = add(model)
    assert_receive {:event, [:hexagon_tpu, :model, :first_answer], _, %{graph: ^name}}
    HexagonTpu.close(model)
  end

  test "load_models/2 failing as a whole: each model's span stops with the error" do
    {:error, %Error{reason: :invalid_option} = e} =
      HexagonTpu.load_models([{:binary, "a"}, {"b.bin", priority: :urgent}],
        backend: :reference
      )

    for {source, i} <- [{:binary, 0}, {"b.bin", 1}] do
      assert_receive {:event, [:hexagon_tpu, :load, :stop], _,
                      %{source: ^source, list_index: ^i, status: {:error, :invalid_option}}}

      assert_receive {:event, [:hexagon_tpu, :error], _, %{operation: :load, error: ^e}}
    end

    # not a list of sources: one span, as load_model/2's of an invalid source
    {:error, %Error{reason: :invalid_argument}} = HexagonTpu.load_models(:nope)

    assert_receive {:event, [:hexagon_tpu, :load, :stop], _,
                    %{source: :invalid, status: {:error, :invalid_argument}}}

    refute_received {:event, [:hexagon_tpu, :load, :stop], _, _}
  end

  test "a raising handler does not fail the execute", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    id = "raising-#{System.unique_integer()}"
    test = self()

    :telemetry.attach(id, [:hexagon_tpu, :execute, :stop], &__MODULE__.raise_in/4, test)

    on_exit(fn -> :telemetry.detach(id) end)
    ExUnit.CaptureLog.capture_log(fn -> assert {:ok, _} = add(model) end)
    assert {:ok, _} = add(model)
    HexagonTpu.close(model)
  end

  test "each Monitor tick emits [:hexagon_tpu, :stats]" do
    pid =
      start_supervised!({Monitor, name: nil, interval_ms: 3_600_000, utilization_window_ms: 5})

    report = Monitor.tick(pid)

    assert_receive {:event, [:hexagon_tpu, :stats], m, %{monitor: ^pid, warnings: []}}

    for key <- [
          :live_runtimes,
          :live_contexts,
          :live_graphs,
          :executes,
          :execute_ns_total,
          :live_handles,
          :memory_binary,
          :memory_total,
          :dirty_cpu,
          :dirty_io,
          :cost_us
        ],
        do: assert(is_number(m[key]), "#{key}")

    assert m.live_handles == report.live_handles
    assert m.cost_us == report.cost_us
  end

  test "load_model/2 and predict/3 emit start and stop events", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, backend: :reference)
    assert_receive {:event, [:hexagon_tpu, :load, :start], _, %{source: :binary}}

    assert_receive {:event, [:hexagon_tpu, :load, :stop], %{duration: _},
                    %{source: :binary, graph: "add_f32", status: :ok}}

    {:error, _} = HexagonTpu.load_model({:binary, "junk"}, backend: :reference)
    assert_receive {:event, [:hexagon_tpu, :error], _, %{operation: :load, reason: :model}}

    {:ok, _} = add(model)

    assert_receive {:event, [:hexagon_tpu, :execute, :start], %{monotonic_time: t0},
                    %{graph: "add_f32"}}

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], %{monotonic_time: t1},
                    %{status: :ok}}

    assert t1 >= t0
    :ok = HexagonTpu.close(model)
  end
end

defmodule HexagonTpu.TelemetryNormalDeclinedTest do
  # Not async: it waits for its own execute to be in flight, which the process-wide
  # executes_in_flight shows only when no other test executes meanwhile.
  use ExUnit.Case, async: false

  @moduletag :telemetry
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:telemetry)
  @compile {:no_warn_undefined, [:telemetry]}

  import HexagonTpu.TestModels

  setup do
    test = self()
    id = "#{inspect(test)}-#{System.unique_integer()}"

    :ok =
      :telemetry.attach(
        id,
        [:hexagon_tpu, :execute, :stop],
        &HexagonTpu.TelemetryTest.forward/4,
        test
      )

    on_exit(fn -> :telemetry.detach(id) end)
    %{bin: build!(add_f32())}
  end

  test "a :normal call behind a busy graph is submitted, and its stop event says so", %{bin: bin} do
    # What made the test above flaky under load, made certain: another process holds the graph
    # (a 300 ms execute), so the :normal call declines rather than wait on a normal scheduler,
    # is submitted to the graph's queue (answered as a message once the graph is free), and the
    # event names where it ran.
    rt =
      HexagonTpu.Runtime.open!(
        backend: :reference,
        env: [{"HTPU_REF_LATENCY", "graphExecute:300000"}]
      )

    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
    holder = Task.async(fn -> add(model, scheduler: :dirty_io) end)
    assert wait_until(fn -> HexagonTpu.stats().executes_in_flight > 0 end, 10_000)
    busy_before = HexagonTpu.stats().normal_declined_busy

    {:ok, _, %{scheduler: :async}} = add(model, stats: true, scheduler: :normal)

    assert_receive {:event, [:hexagon_tpu, :execute, :stop], _, %{status: :ok, scheduler: :async}}

    assert HexagonTpu.stats().normal_declined_busy > busy_before
    assert {:ok, _} = Task.await(holder, 10_000)
    HexagonTpu.close(model)
    HexagonTpu.Runtime.close(rt)
  end
end
