defmodule HexagonTpu.DeviceTest do
  # HTP device features from Elixir: performance profiles, zero-copy shared IO, device and
  # binary info, DSP-restart recovery, start-up retries, binary compatibility.
  # Not async: fault rules and HTPU_REF_* travel through the OS environment (the `env:` test
  # hooks), and the leak checks compare process-wide counters with a baseline.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Error, Graph, Runtime, SharedIO}

  setup_all do
    # capture_log needs Elixir's Logger, which this package does not start (it logs through
    # Erlang's :logger, which Logger forwards); an application using it always has.
    {:ok, _} = Application.ensure_all_started(:logger)
    %{add: build!(add_f32()), mixed: build!(mixed())}
  end

  defp runtime(env), do: Runtime.open!([backend: :reference] ++ env)

  defp faults(rules), do: [env: [{"HTPU_REF_FAULTS", rules}]]

  defp live_shared, do: HexagonTpu.stats().live_shared_buffers

  # Polls (with GC of every process) until live_shared_buffers == want.
  defp wait_shared(want, tries \\ 300) do
    for p <- Process.list(), do: :erlang.garbage_collect(p)

    cond do
      live_shared() == want -> want
      tries == 0 -> live_shared()
      true -> Process.sleep(10) && wait_shared(want, tries - 1)
    end
  end

  # ---- performance profiles ----------------------------------------------------------------

  describe "performance profiles" do
    test "every profile is accepted at open and reported back by Runtime.info/1" do
      assert length(Runtime.perf_profiles()) == 10

      for p <- Runtime.perf_profiles() do
        rt = runtime(perf_profile: p)
        assert Runtime.info(rt).perf_profile == p
        assert rt.info.perf_profile == p
        Runtime.close(rt)
      end

      assert Runtime.info(runtime([])).perf_profile == :default
    end

    test "set_perf_profile/2 changes it later, every profile and back to :default" do
      rt = runtime([])
      assert Runtime.info(rt).has_perf_infrastructure

      for p <- Runtime.perf_profiles() do
        assert Runtime.set_perf_profile(rt, p) == :ok
        assert Runtime.info(rt).perf_profile == p
      end

      assert :ok = Runtime.set_perf_profile!(rt, :burst)
      assert Runtime.info(rt).perf_profile == :burst
      # the struct keeps what was read at open
      assert rt.info.perf_profile == :default
    end

    test "bad names are :invalid_option errors listing the profiles" do
      assert {:error, %Error{reason: :invalid_option, message: msg}} =
               Runtime.open(backend: :reference, perf_profile: :turbo)

      assert msg =~ "expected :perf_profile to be one of :burst, :sustained_high_performance"
      assert msg =~ ":extreme_power_saver, :default, got :turbo"

      rt = runtime([])

      assert {:error, %Error{reason: :invalid_option, message: msg}} =
               Runtime.set_perf_profile(rt, "burst")

      assert msg =~ "one of :burst" and msg =~ ~s(got "burst")
      assert_raise Error, fn -> Runtime.set_perf_profile!(rt, :fast) end

      model = HexagonTpu.load_model!({:binary, build!(add_f32())}, runtime: rt)

      assert {:error, %Error{reason: :invalid_option, message: msg}} =
               HexagonTpu.predict(model, add_inputs(), perf_profile: :max)

      assert msg =~ "one of :burst" and msg =~ "got :max"

      assert {:error, %Error{reason: :invalid_option}} =
               HexagonTpu.load_model({:binary, build!(add_f32())},
                 backend: :reference,
                 perf_profile: 3
               )
    end

    test "load_model/2 passes :perf_profile to its shared runtime", %{add: bin} do
      model = HexagonTpu.load_model!({:binary, bin}, backend: :reference, perf_profile: :balanced)
      assert {:ok, [_]} = add(model)
      {:ok, rt} = Runtime.shared(backend: :reference, perf_profile: :balanced)
      assert Runtime.info(rt).perf_profile == :balanced
    end

    test "a per-call profile works and leaves the runtime's profile alone", %{add: bin} do
      rt = runtime(perf_profile: :power_saver)
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)

      for p <- Runtime.perf_profiles() do
        assert {:ok, [y]} =
                 HexagonTpu.predict(model, add_inputs(), output: :binary, perf_profile: p)

        assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      end

      assert {:ok, [_], %{execute_ns: _}} =
               Graph.execute(model, add_inputs(), perf_profile: :burst, stats: true)

      assert Runtime.info(rt).perf_profile == :power_saver
    end

    test "a backend without a device has no perf infrastructure: only :default" do
      rt = runtime(skip_device: true)
      info = Runtime.info(rt)
      refute info.has_device
      refute info.has_perf_infrastructure
      assert {:error, %Error{reason: :unsupported}} = Runtime.set_perf_profile(rt, :burst)
      assert :ok = Runtime.set_perf_profile(rt, :default)
    end
  end

  # ---- device and binary info --------------------------------------------------------------

  describe "info" do
    test "Runtime.info/1 reports the device, profile, shared memory and start-up attempts" do
      info = Runtime.info(runtime([]))
      assert info.device_arch == 68
      assert info.device_soc_model == 35
      assert info.device_vtcm_bytes == 2 * 1_048_576
      refute Map.has_key?(info, :device_vtcm_mb)
      assert info.has_shared_memory
      assert info.shared_memory_note == nil
      assert info.startup_attempts == 1

      other = runtime(env: [{"HTPU_REF_DEVICE", "arch=73,soc_model=93,vtcm_mb=8"}])

      assert %{device_arch: 73, device_soc_model: 93, device_vtcm_bytes: 8_388_608} =
               Runtime.info(other)

      # a device reporting bytes instead of MB says the same
      bytes = runtime(env: [{"HTPU_REF_DEVICE", "vtcm_bytes=8388608"}])
      assert Runtime.info(bytes).device_vtcm_bytes == 8_388_608
    end

    test "a QNN log that cannot be created is :log_note, and the runtime still works",
         %{add: bin} do
      assert Runtime.info(runtime([])).log_note == nil

      # the real HTP library fails logCreate with 11002 when no DSP is reachable
      rt = runtime(faults("logCreate:*:11002"))
      info = Runtime.info(rt)
      assert info.log_note =~ "QNN log unavailable: logCreate returned 11002"
      assert info.log_note =~ "QNN_LOG_ERROR_INITIALIZATION"
      assert info.has_device
      assert rt.info.log_note == info.log_note

      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      assert {:ok, [_]} = add(model)
    end

    test "Graph.model_info/1 and Context.info/1 give the binary's side", %{add: bin} do
      rt = runtime([])
      ctx = Context.load!(rt, {:binary, bin})
      model = Graph.open!(ctx)
      mi = Graph.model_info(model)
      assert mi.dsp_arch == 68
      assert mi.soc_model == 35
      assert is_binary(mi.build_id)
      assert {2, _, _} = mi.core_api_version
      assert {5, _, _} = mi.backend_api_version
      refute Map.has_key?(mi, :graphs)
      assert Map.delete(Context.info(ctx), :graphs) == mi
    end

    test "a closed runtime's info is the one read at open" do
      rt = runtime(perf_profile: :balanced)
      :ok = Runtime.set_perf_profile(rt, :burst)
      Runtime.close(rt)
      assert Runtime.info(rt).perf_profile == :balanced
    end
  end

  # ---- shared IO ---------------------------------------------------------------------------

  # Inputs for every graph of mixed(): f32 values inside each input's range.
  @mixed_inputs %{
    "fc_u8" => [[1.0, -2.5, 3.0]],
    "relu_f16" => [[-1.5, 0.0, 2.25, 7.0]],
    "relu_i8" => [[-0.7, 0.3, 1.2, -0.1]],
    "add_u16" => [[1.0, 2.5, -3.0, 0.5], [0.25, -1.0, 2.0, 4.0]],
    "relu_i16" => [[-0.5, 0.25, 0.125]],
    "two_out" => [[1.5, -2.0], [3.0, 0.5]],
    "per_axis_in" => [[0.5, 1.0, -0.5, 0.25, 0.75, 1.25]]
  }

  describe "shared IO" do
    test "gives the same outputs as ordinary predict for every I/O type", %{mixed: bin} do
      rt = runtime([])
      ctx = Context.load!(rt, {:binary, bin})
      regs = HexagonTpu.stats().mem_registrations

      for name <- Context.graph_names(ctx) do
        g = Graph.open!(ctx, graph: name)
        inputs = Enum.map(Map.fetch!(@mixed_inputs, name), &f32/1)

        # f32 in (quantized by the core), f32 out (dequantized)
        {:ok, want} = Graph.execute(g, inputs, output: :binary)
        {:ok, io} = Graph.alloc_io(g)
        assert io.fastrpc and SharedIO.fastrpc?(io) and io.note == nil
        assert :ok = SharedIO.write_inputs(io, inputs)
        assert {:ok, ^io} = HexagonTpu.predict(g, io)
        assert {:ok, ^want} = SharedIO.read_outputs(io, output: :binary)

        # the tensors' own types in and out, no conversion anywhere
        {:ok, raw_out} = Graph.execute(g, inputs, output: :binary, dequantize: :none)
        raw_in = for i <- 0..(length(inputs) - 1), do: SharedIO.read_input!(io, i)

        {:ok, want_raw} =
          Graph.execute(g, raw_in, output: :binary, quantize: :none, dequantize: :none)

        assert want_raw == raw_out

        {:ok, io2} = Graph.alloc_io(g)

        for {r, i} <- Enum.with_index(raw_in),
            do: assert(:ok = SharedIO.write_input(io2, i, r, quantize: :none))

        assert {:ok, ^io2, %{execute_ns: _, nif_ns: _}} = Graph.execute(g, io2, stats: true)
        assert {:ok, ^raw_out} = SharedIO.read_outputs(io2, output: :binary, dequantize: :none)

        views = for i <- 0..(length(g.outputs) - 1), do: view!(io2, i)
        assert views == raw_out
        SharedIO.close(io)
        SharedIO.close(io2)
      end

      # every tensor of the first execute of each buffer was registered with the context
      assert HexagonTpu.stats().mem_registrations > regs
    end

    test "inputs and outputs by name, Nx-free binaries, errors", %{add: bin} do
      model = HexagonTpu.load_model!({:binary, bin}, runtime: runtime([]))
      io = HexagonTpu.alloc_io(model) |> elem(1)
      assert io.size >= 3 * 16
      :ok = SharedIO.write_input!(io, "a", f32([1, 2, 3, 4]))
      :ok = SharedIO.write_input!(io, "b", f32([10, 20, 30, 40]))
      assert ^io = HexagonTpu.predict!(model, io)
      assert from_f32(SharedIO.read_output!(io, "y", output: :binary)) == [11.0, 22.0, 33.0, 44.0]

      assert {:error, %Error{reason: :invalid_argument, message: m}} =
               SharedIO.write_input(io, "nope", f32([1, 2, 3, 4]))

      assert m =~ ~s(no input "nope") and m =~ ~s("a", "b")
      assert {:error, %Error{reason: :invalid_argument}} = SharedIO.read_output(io, 1)

      assert {:error, %Error{reason: :mismatch, tensor: "a"}} =
               SharedIO.write_input(io, 0, f32([1, 2]))

      assert {:error, %Error{reason: :mismatch}} = SharedIO.write_inputs(io, [f32([1, 2, 3, 4])])
      assert {:error, %Error{reason: :invalid_option}} = SharedIO.write_input(io, 0, "", bad: 1)

      assert {:error, %Error{reason: :invalid_option}} =
               HexagonTpu.predict(model, io, quantize: :none)

      # NaN cannot be quantized (a u8 input)
      {:ok, ctx} = Context.load(runtime([]), {:binary, build!(two_graphs())})
      u8 = Graph.open!(ctx, graph: "scale_u8")
      u8_io = Graph.alloc_io!(u8)
      nan = <<0, 0, 192, 127>>

      assert {:error, %Error{reason: :nan, tensor: "x"}} =
               SharedIO.write_input(u8_io, 0, f32([1, 2, 3]) <> nan)

      # read_input/3: options given merge with its defaults (dequantize: :none,
      # output: :binary), so a view of a u8 input needs no dequantize: :none
      :ok = SharedIO.write_input(u8_io, 0, f32([0.0, 1.0, 2.0, 3.0]))
      {:ok, raw} = SharedIO.read_input(u8_io, 0)
      assert byte_size(raw) == 4
      assert {:ok, ^raw} = SharedIO.read_input(u8_io, 0, view: true)
      assert {:ok, ^raw} = SharedIO.read_input(u8_io, "x", view: true, output: :binary)
      {:ok, back} = SharedIO.read_input(u8_io, 0, dequantize: :auto, output: :binary)
      assert_close(from_f32(back), [0.0, 1.0, 2.0, 3.0], 0.051)

      assert {:error, %Error{reason: :invalid_option, message: m, tensor: "x"}} =
               SharedIO.read_input(u8_io, 0, view: true, dequantize: :auto)

      assert m =~ "HexagonTpu.SharedIO.read_input/3: view: true reads input 'x'"

      # a view of a quantized output needs dequantize: :none
      assert {:error, %Error{reason: :invalid_option, message: m}} =
               SharedIO.read_output(u8_io, 0, view: true)

      assert m =~ "dequantize: :none"

      # another graph's buffer
      other = HexagonTpu.load_model!({:binary, bin}, runtime: runtime([]))

      assert {:error, %Error{reason: :invalid_argument, message: m}} =
               HexagonTpu.predict(other, io)

      assert m =~ "another graph"
    end

    test "closed buffers are :closed errors; a view keeps the memory alive", %{add: bin} do
      # a baseline taken once every earlier test's buffers are freed (GC + reaper quiet)
      base = settle().live_shared_buffers
      model = HexagonTpu.load_model!({:binary, bin}, runtime: runtime([]))
      {:ok, io} = Graph.alloc_io(model)
      assert live_shared() == base + 1
      :ok = SharedIO.write_inputs(io, add_inputs())
      {:ok, ^io} = HexagonTpu.predict(model, io)
      view = view!(io, 0)

      assert :ok = SharedIO.close(io)
      assert :ok = SharedIO.close(io)
      assert {:error, %Error{reason: :closed}} = SharedIO.write_inputs(io, add_inputs())
      assert {:error, %Error{reason: :closed}} = SharedIO.read_output(io, 0)
      assert {:error, %Error{reason: :closed}} = SharedIO.read_output(io, 0, view: true)
      assert {:error, %Error{reason: :closed}} = HexagonTpu.predict(model, io)

      # the view still reads the buffer, which is still allocated
      assert live_shared() == base + 1
      assert from_f32(view) == [2.0, 3.0, 4.0, 5.0]
      assert from_f32(:binary.copy(view)) == [2.0, 3.0, 4.0, 5.0]

      # once the view is garbage, the reaper frees the buffer
      _ = view
      view = nil
      _ = view
      assert wait_shared(base) == base
    end

    test "a view shows the next execute's output; :binary.copy/1 keeps a snapshot", %{add: bin} do
      model = HexagonTpu.load_model!({:binary, bin}, runtime: runtime([]))
      io = Graph.alloc_io!(model)
      :ok = SharedIO.write_inputs(io, add_inputs())
      {:ok, _} = HexagonTpu.predict(model, io)
      view = view!(io, 0)
      snapshot = :binary.copy(view)
      :ok = SharedIO.write_input(io, 0, f32([5, 5, 5, 5]))
      {:ok, _} = HexagonTpu.predict(model, io)
      assert from_f32(view) == [6.0, 6.0, 6.0, 6.0]
      assert from_f32(snapshot) == [2.0, 3.0, 4.0, 5.0]
    end

    test "thousands of alloc/execute/free cycles leak nothing", %{add: bin, mixed: mixed} do
      base_live = settle()
      base_shared = base_live.live_shared_buffers
      rt = runtime([])
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      fc = Graph.open!(Context.load!(rt, {:binary, mixed}), graph: "fc_u8")

      for i <- 1..3000 do
        {g, inputs} =
          if rem(i, 3) == 0,
            do: {fc, [f32([1.0, -2.5, 3.0])]},
            else: {model, add_inputs()}

        {:ok, io} = Graph.alloc_io(g)
        :ok = SharedIO.write_inputs(io, inputs)
        {:ok, ^io} = Graph.execute(g, io)
        {:ok, [_ | _]} = SharedIO.read_outputs(io, dequantize: :none, view: rem(i, 2) == 0)

        # half closed explicitly, half left to the garbage collector
        if rem(i, 2) == 1, do: SharedIO.close(io)
      end

      # concurrently too
      1..8
      |> Task.async_stream(
        fn _ ->
          for _ <- 1..100 do
            io = Graph.alloc_io!(model)
            :ok = SharedIO.write_inputs(io, add_inputs())
            {:ok, _} = HexagonTpu.predict(model, io)
            {:ok, [y]} = SharedIO.read_outputs(io, output: :binary)
            SharedIO.close(io)
            from_f32(y)
          end
        end,
        max_concurrency: 8
      )
      |> Enum.each(fn {:ok, ys} -> assert Enum.all?(ys, &(&1 == [2.0, 3.0, 4.0, 5.0])) end)

      assert wait_shared(base_shared) == base_shared
      Graph.close(model)
      Graph.close(fc)
      Runtime.close(rt)
      assert wait_for_live(base_live) == base_live
    end

    test "falls back to ordinary memory when FastRPC allocation fails, and warns once",
         %{add: bin} do
      rt = runtime([])
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      fail = [env: [{"HTPU_REF_RPCMEM_FAIL", "1"}]]

      {io, log} =
        with_log(fn ->
          {:ok, io} = Graph.alloc_io(model, fail)
          io
        end)

      refute io.fastrpc
      assert io.note =~ "rpcmem_alloc"
      assert log =~ "shared IO uses ordinary memory"
      assert log =~ "rpcmem_alloc"
      assert Runtime.info(rt).shared_memory_note =~ "rpcmem_alloc"

      # works the same, with ordinary memory
      :ok = SharedIO.write_inputs(io, add_inputs())
      {:ok, ^io} = HexagonTpu.predict(model, io)
      assert {:ok, [y]} = SharedIO.read_outputs(io, output: :binary)
      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      assert from_f32(view!(io, 0)) == [2.0, 3.0, 4.0, 5.0]

      # a second fallback on the same runtime does not warn again
      log2 = capture_log(fn -> {:ok, %SharedIO{fastrpc: false}} = Graph.alloc_io(model, fail) end)
      refute log2 =~ "shared IO"

      # ... another runtime does, once
      other = HexagonTpu.load_model!({:binary, bin}, runtime: runtime([]))
      log3 = capture_log(fn -> {:ok, %SharedIO{fastrpc: false}} = Graph.alloc_io(other, fail) end)
      assert log3 =~ "shared IO uses ordinary memory"

      # and without the failure FastRPC memory is back
      assert {:ok, %SharedIO{fastrpc: true}} = Graph.alloc_io(model)
    end

    test "without a FastRPC library the runtime says why, and shared IO still works",
         %{add: bin} do
      rt = runtime(fastrpc_library: "/nonexistent/libcdsprpc.so")
      info = Runtime.info(rt)
      refute info.has_shared_memory
      assert info.shared_memory_note =~ "/nonexistent/libcdsprpc.so"
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)

      {io, log} = with_log(fn -> Graph.alloc_io!(model) end)
      assert log =~ "/nonexistent/libcdsprpc.so"
      refute io.fastrpc
      :ok = SharedIO.write_inputs(io, add_inputs())
      assert {:ok, ^io} = HexagonTpu.predict(model, io)
      assert {:ok, [y]} = SharedIO.read_outputs(io, output: :binary)
      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    end
  end

  # ---- recovery, resets, start-up, compatibility ---------------------------------------------

  describe "DSP restarts" do
    test "an injected 1007 (a real subsystem restart) is recovered transparently", %{add: bin} do
      before = HexagonTpu.stats()

      model =
        HexagonTpu.load_model!({:binary, bin}, runtime: runtime(faults("graphExecute:1:1007:ssr")))

      assert {:ok, [y]} = add(model)
      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
      after_ = HexagonTpu.stats()
      assert after_.recoveries == before.recoveries + 1
      assert after_.recovery_failures == before.recovery_failures
      assert {:ok, [_]} = add(model)
    end

    test "recovery re-registers shared buffers", %{add: bin} do
      before = HexagonTpu.stats()
      rt = runtime(faults("graphExecute:2:1007:ssr"))
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      io = Graph.alloc_io!(model)
      :ok = SharedIO.write_inputs(io, add_inputs())
      {:ok, _} = HexagonTpu.predict(model, io)
      :ok = SharedIO.write_input(io, 0, f32([2, 2, 2, 2]))
      # the restart hits this call: context recreated, buffers registered again, retried
      assert {:ok, _} = HexagonTpu.predict(model, io)
      assert {:ok, [y]} = SharedIO.read_outputs(io, output: :binary)
      assert from_f32(y) == [3.0, 3.0, 3.0, 3.0]
      after_ = HexagonTpu.stats()
      assert after_.recoveries == before.recoveries + 1
      assert after_.mem_registrations >= before.mem_registrations + 6
    end

    test "recovery: false gives the 1007 error itself", %{add: bin} do
      rt = runtime([recovery: false] ++ faults("graphExecute:1:1007:ssr"))
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)

      assert {:error, %Error{reason: :qnn_error, qnn_code: 1007} = e} = add(model)
      assert e.qnn_name == "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION"

      assert {:error, %Error{reason: :invalid_option, message: m}} =
               Runtime.open(backend: :reference, recovery: :yes)

      assert m =~ "true, false or a non-negative integer"
    end

    test "recovery: n retries n times", %{add: bin} do
      rt = runtime([recovery: 3] ++ faults("graphExecute:1:1007:3:ssr"))
      model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)
      assert {:ok, [y]} = add(model)
      assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    end

    test "1011 is :device_reset, and every handle stays safe to close", %{add: bin} do
      before = HexagonTpu.stats()
      rt = runtime(faults("graphExecute:1:1011"))
      ctx = Context.load!(rt, {:binary, bin})
      model = Graph.open!(ctx)
      io = Graph.alloc_io!(model)
      :ok = SharedIO.write_inputs(io, add_inputs())

      assert {:error, %Error{reason: :device_reset} = e} = HexagonTpu.predict(model, io)
      assert Exception.message(e) =~ "device_reset"
      assert {:error, %Error{}} = add(model)
      assert HexagonTpu.stats().recovery_failures >= before.recovery_failures + 1

      assert :ok = SharedIO.close(io)
      assert :ok = Graph.close(model)
      assert :ok = Context.close(ctx)
      assert :ok = Runtime.close(rt)
      assert {:error, %Error{reason: :closed}} = add(model)

      # a fresh runtime works
      fresh = HexagonTpu.load_model!({:binary, bin}, runtime: runtime([]))
      assert {:ok, _} = add(fresh)
    end
  end

  describe "start-up and compatibility" do
    test "start-up retries get past transient device-creation failures" do
      before = HexagonTpu.stats().startup_retries
      # a unique rule string: the process-wide rules re-arm only when the text changes
      rules =
        "deviceCreate:1:14002:2,graphRetrieve:#{System.unique_integer([:positive]) + 10_000}:1000"

      rt = runtime([startup_retry_delay_ms: 1] ++ faults(rules))
      assert Runtime.info(rt).startup_attempts == 3
      assert HexagonTpu.stats().startup_retries == before + 2

      rules =
        "deviceCreate:1:14002:2,graphRetrieve:#{System.unique_integer([:positive]) + 10_000}:1000"

      assert {:error, %Error{qnn_code: 14002}} =
               Runtime.open(
                 [backend: :reference, startup_retries: 1, startup_retry_delay_ms: 1] ++
                   faults(rules)
               )
    end

    test "a binary built for another DSP arch is :incompatible, naming both sides" do
      text = "meta dsp_arch=73\n" <> add_f32()
      bin = build!(text)

      assert {:error, %Error{reason: :incompatible, message: m}} =
               HexagonTpu.load_model({:binary, bin}, runtime: runtime([]))

      assert m =~ "73" and m =~ "68"

      # the same binary on a v73 device loads
      v73 = runtime(env: [{"HTPU_REF_DEVICE", "arch=73"}])
      assert {:ok, model} = HexagonTpu.load_model({:binary, bin}, runtime: v73)
      assert Graph.model_info(model).dsp_arch == 73
      assert {:ok, _} = add(model)
    end

    test "VTCM is in bytes: an 8 MB binary (bytes in its blob info) fits an 8 MB device" do
      bin = build!("meta vtcm_bytes=8388608\n" <> add_f32())
      mb_form = build!("meta vtcm_bytes=8388608 vtcm_blob_unit=mb\n" <> add_f32())
      rt = runtime(env: [{"HTPU_REF_DEVICE", "vtcm_mb=8"}])

      for b <- [bin, mb_form] do
        ctx = Context.load!(rt, {:binary, b})
        assert [%{name: "add_f32", vtcm_bytes: 8_388_608} = g] = ctx.graphs
        refute Map.has_key?(g, :vtcm_mb)
        assert [%{vtcm_bytes: 8_388_608}] = Context.info(ctx).graphs
        model = Graph.open!(ctx)
        assert %Graph{vtcm_bytes: 8_388_608} = model
        assert {:ok, _} = add(model)
      end

      too_big = build!("meta vtcm_bytes=16777216\n" <> add_f32())

      assert {:error, %Error{reason: :incompatible, message: m}} =
               HexagonTpu.load_model({:binary, too_big}, runtime: rt)

      assert m =~ "graph 'add_f32' needs 16 MB of VTCM, this device has 8 MB"
    end
  end

  defp view!(io, i),
    do: SharedIO.read_output!(io, i, view: true, dequantize: :none, output: :binary)
end
