defmodule HexagonTpu.ErrorsTest do
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Error, Graph, Runtime}

  setup_all do
    %{
      model:
        HexagonTpu.load_model!({:binary, build!(two_graphs())},
          backend: :reference,
          graph: "scale_u8"
        ),
      add: HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
    }
  end

  defp err(result) do
    assert {:error, %Error{} = e} = result
    e
  end

  describe "inputs" do
    test "wrong count names the graph and its inputs", %{add: add} do
      e = err(HexagonTpu.predict(add, [f32([1, 2, 3, 4])]))
      assert e.reason == :mismatch
      assert e.message =~ "graph 'add_f32' expects 2 input(s) (a, b), got 1"
    end

    test "wrong byte size names tensor, expected and given", %{add: add} do
      e = err(HexagonTpu.predict(add, [f32([1, 2, 3, 4]), f32([1, 2, 3])]))
      assert %{reason: :mismatch, tensor: "b"} = e

      assert e.message =~
               "input 'b' (1): expected 16 bytes (4 f32 elements of shape {1, 4}), got 12"
    end

    test "native-sized data without quantize: :none gets a hint", %{model: model} do
      e = err(HexagonTpu.predict(model, [<<1, 2, 3, 4>>]))
      assert e.message =~ "expected 16 bytes"
      assert e.message =~ "pass quantize: :none"
    end

    test "native data of the wrong size", %{model: model} do
      e = err(HexagonTpu.predict(model, [<<1, 2, 3>>], quantize: :none))
      assert e.message =~ "input 'x' (0): expected 4 bytes (4 u8 elements of shape {1, 4}), got 3"
    end

    test "not a tensor or binary", %{add: add} do
      e = err(HexagonTpu.predict(add, [f32([1, 2, 3, 4]), [1, 2, 3, 4]]))
      assert %{reason: :mismatch, tensor: "b"} = e
      assert e.message =~ "expected an Nx tensor or a binary, got [1, 2, 3, 4]"
    end

    test "inputs not a list", %{add: add} do
      assert %{reason: :invalid_argument} = err(HexagonTpu.predict(add, f32([1, 2, 3, 4])))
    end

    test "an improper list of inputs is an error, not a raise", %{add: add} do
      e = err(HexagonTpu.predict(add, [f32([1, 2, 3, 4]) | f32([1, 2, 3, 4])]))
      assert e.reason == :invalid_argument
      assert e.message =~ "expected a proper list of inputs"
    end

    test "NaN cannot be quantized; the C message names the tensor and element", %{model: model} do
      nan = <<0, 0, 192, 127>>
      e = err(HexagonTpu.predict(model, [f32([1, 2]) <> nan <> f32([3])]))
      assert e.reason == :nan
      assert e.message =~ "'x'"
      assert e.message =~ "element 2"
      # the core's message names the input: so does the error's :tensor
      assert e.tensor == "x"
    end

    test "Error.put_tensor/2 takes only a name of the graph, from :mismatch / :nan" do
      e = Error.new(:mismatch, "graph 'g' output 'y': expected 16 bytes, given 8")
      assert {:error, %Error{tensor: "y"}} = Error.put_tensor({:error, e}, ["a", "y"])
      assert {:error, %Error{tensor: nil}} = Error.put_tensor({:error, e}, ["a", "b"])
      q = Error.new(:qnn_error, "input 'a' failed")
      assert {:error, %Error{tensor: nil}} = Error.put_tensor({:error, q}, ["a"])
      assert Error.put_tensor({:ok, 1}, ["a"]) == {:ok, 1}
    end

    test "the model is not an Nx tensor or graph" do
      assert %{reason: :invalid_argument} = err(HexagonTpu.predict(:nope, []))
    end
  end

  describe "options" do
    test "unknown option of predict", %{add: add} do
      e = err(HexagonTpu.predict(add, [], bogus: 1))
      assert e.reason == :invalid_option
      assert e.message =~ "unknown option :bogus"
    end

    test "bad option values say what was expected and what was given", %{add: add} do
      e = err(HexagonTpu.predict(add, [], quantize: :yes))

      assert e.message ==
               "HexagonTpu.Graph.execute/3: expected :quantize to be :auto or :none, got :yes"

      e = err(HexagonTpu.predict(add, [], perf_profile: :turbo))
      assert e.message =~ "HexagonTpu.Graph.execute/3: expected :perf_profile to be one of :burst"
      assert e.message =~ "got :turbo"
      assert err(HexagonTpu.predict(add, [], output: "nx")).reason == :invalid_option
      assert err(HexagonTpu.predict(add, [], :not_a_keyword)).reason == :invalid_option
    end

    test "output: :nx without Nx is an error, not a crash", %{add: add} do
      if !Code.ensure_loaded?(Nx) do
        e = err(HexagonTpu.predict(add, [f32([1, 2, 3, 4]), f32([1, 2, 3, 4])], output: :nx))
        assert e.message =~ "HexagonTpu.Graph.execute/3: "
        assert e.message =~ "needs Nx"
      end
    end

    test "unknown option and bad values of load_model" do
      bin = build!(add_f32())
      assert err(HexagonTpu.load_model(bin, bogus: true)).message =~ "unknown option :bogus"
      assert err(HexagonTpu.load_model(bin, backend: 42)).message =~ "expected :backend to be"
      assert err(HexagonTpu.load_model(bin, graph: 1)).reason == :invalid_option
      rt = Runtime.open!(backend: :reference)

      assert err(HexagonTpu.load_model(bin, runtime: rt, backend: :reference)).message =~
               "either :runtime"
    end

    test "bad runtime options" do
      assert err(Runtime.open(log_level: :loud)).message =~ "expected :log_level to be"
      assert err(Runtime.open(env: [{"A", 1}])).reason == :invalid_option
    end

    test "integer runtime options beyond the C side's uint32_t: the option, value and range" do
      bin = build!(add_f32())

      for {opt, value} <- [
            startup_retries: 10 ** 30,
            startup_retry_delay_ms: 2 ** 40,
            backend_id: 2 ** 33,
            backend_id: 2 ** 32,
            startup_retries: -1
          ],
          call <- [
            fn o -> Runtime.open([backend: :reference] ++ o) end,
            fn o -> Runtime.shared([backend: :reference] ++ o) end,
            fn o -> HexagonTpu.load_model({:binary, bin}, [backend: :reference] ++ o) end
          ] do
        e = err(call.([{opt, value}]))
        assert e.reason == :invalid_option
        assert e.message =~ "expected #{inspect(opt)} to be an integer in 0..4294967295"
        assert e.message =~ "got #{value}"
      end

      # the bound itself is accepted (a provider id nobody has: refused by the loader, not here)
      assert %{reason: :no_provider} =
               err(Runtime.open(backend: :reference, backend_id: 4_294_967_295))
    end

    test "env: names non-empty without = or NUL, values without NUL, at most 16 entries" do
      cases = [
        {[{"A", "x\0y"}], "the :env value of \"A\" to be nil or a string without NUL"},
        {[{"A=B", "1"}], "each :env name to be a non-empty string without \"=\" or NUL"},
        {[{"", "1"}], "each :env name to be a non-empty string"},
        {[{"A\0B", "1"}], "each :env name to be a non-empty string without \"=\" or NUL"},
        {[{"A", 1}], "the :env value of \"A\" to be nil or a string"},
        {[{:a, "1"}], "each :env entry to be a {name, value | nil} tuple of strings"},
        {[{"A", "1"} | :tail], "a proper list"},
        {for(i <- 1..100_000, do: {"HTPU_T#{i}", "1"}), "at most 16 entries, got 100000"},
        {for(i <- 1..17, do: {"HTPU_T#{i}", "1"}), "at most 16 entries, got 17"},
        {:nope, "expected :env to be a list of at most 16"}
      ]

      for {env, message} <- cases do
        e = err(Runtime.open(backend: :reference, env: env))
        assert e.reason == :invalid_option
        assert e.message =~ "HexagonTpu.Runtime.open/1: "
        assert e.message =~ message
      end

      g = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
      e = err(Graph.alloc_io(g, env: [{"A=B", "1"}]))
      assert e.message =~ "HexagonTpu.Graph.alloc_io/2: expected each :env name"
      HexagonTpu.close(g)
    end

    test "an option given twice is refused, naming it, as htpu refuses a repeated option",
         %{add: add} do
      bin = build!(add_f32())
      rt = Runtime.open!(backend: :reference)

      for {result, where, key} <- [
            {HexagonTpu.load_model({:binary, bin}, backend: :reference, graph: "a", graph: "b"),
             "HexagonTpu.load_model/2", :graph},
            {HexagonTpu.load_model({:binary, bin}, runtime: rt, runtime: rt),
             "HexagonTpu.load_model/2", :runtime},
            {HexagonTpu.load_model({:binary, bin}, backend: :reference, backend: :reference),
             "HexagonTpu.Runtime.shared/1", :backend},
            {HexagonTpu.load_models([{{:binary, bin}, graph: "a", graph: "b"}], runtime: rt),
             "HexagonTpu.load_models/2: model 0", :graph},
            {HexagonTpu.load_models([{:binary, bin}], runtime: rt, runtime: rt),
             "HexagonTpu.load_models/2", :runtime},
            {HexagonTpu.load_models([{:binary, bin}], runtime: rt, timeout: 1, timeout: 2),
             "HexagonTpu.load_models/2", :timeout},
            {Context.load(rt, {:binary, bin}, mapping: :copy, mapping: :auto),
             "HexagonTpu.Context.load/3", :mapping},
            {Runtime.open(backend: :reference, log_level: :error, log_level: :warn),
             "HexagonTpu.Runtime.open/1", :log_level},
            {HexagonTpu.predict(add, add_inputs(), output: :binary, output: :nx),
             "HexagonTpu.Graph.execute/3", :output}
          ] do
        e = err(result)
        assert e.reason == :invalid_option

        assert e.message ==
                 "#{where}: option #{inspect(key)} given twice (each option may be given once)"
      end

      # the functions that read their options themselves
      twice = "option :stride given twice (each option may be given once)"

      # (a frame's errors are all :invalid_argument; it said "unknown option :stride")
      assert {:error,
              %Error{
                reason: :invalid_argument,
                message: "HexagonTpu.Vision.Frame.new/5: " <> ^twice
              }} = HexagonTpu.Vision.Frame.new(<<0::96>>, 2, 2, :rgb24, stride: 6, stride: 6)

      assert_raise ArgumentError, ~r"^HexagonTpu.stream/3: option :in_flight given twice", fn ->
        HexagonTpu.stream(add, [add_inputs()], in_flight: 1, in_flight: 2)
      end

      assert_raise ArgumentError, ~r"^HexagonTpu.Stats.board/1: option :root given twice", fn ->
        HexagonTpu.Stats.board(root: "/nonexistent", root: "/")
      end

      # a model's own option over the call's is no repetition: the model's wins
      assert {:ok, [{:ok, m}]} =
               HexagonTpu.load_models([{{:binary, bin}, priority: :high}],
                 runtime: rt,
                 priority: :low
               )

      assert m.priority == :high
      HexagonTpu.close(m)
      Runtime.close(rt)
    end

    test "strings for C are refused with a NUL byte, not cut at it" do
      bin = build!(add_f32())

      for {opt, value} <- [
            graph: "add\0f32",
            backend: "/usr/lib/libQnnHtp.so\0x",
            system_library: "a\0b",
            dsp_library_path: "a\0b",
            fastrpc_library: "a\0b"
          ] do
        e =
          err(
            HexagonTpu.load_model(
              {:binary, bin},
              Keyword.merge([backend: :reference], [{opt, value}])
            )
          )

        assert e.reason == :invalid_option
        assert e.message =~ "expected #{inspect(opt)} to be"
        assert e.message =~ "without NUL bytes"
      end

      rt = Runtime.open!(backend: :reference)
      ctx = Context.load!(rt, {:binary, bin})
      assert %{reason: :invalid_option} = err(Graph.open(ctx, graph: "add\0f32"))
      Context.close(ctx)
      Runtime.close(rt)
    end

    test "! variants raise HexagonTpu.Error", %{add: add} do
      assert_raise Error, ~r/unknown option :bogus/, fn ->
        HexagonTpu.predict!(add, [], bogus: 1)
      end

      assert_raise Error, ~r/^io: cannot open/, fn ->
        HexagonTpu.load_model!("/nonexistent.bin", backend: :reference)
      end

      assert_raise Error, fn -> Runtime.open!(backend: "/nonexistent/libQnnHtp.so") end
    end
  end

  describe "models and graphs" do
    test "unknown graph lists the graphs" do
      e =
        err(
          HexagonTpu.load_model({:binary, build!(two_graphs())},
            backend: :reference,
            graph: "nope"
          )
        )

      assert e.reason == :not_found
      assert e.message =~ "'add_f32', 'scale_u8'"
    end

    test "no graph name with several graphs" do
      e = err(HexagonTpu.load_model({:binary, build!(two_graphs())}, backend: :reference))
      assert e.reason == :invalid_argument
      assert e.message =~ "name the one to open"
    end

    test "missing, unreadable and corrupt files" do
      assert %{reason: :io} =
               err(HexagonTpu.load_model("/nonexistent/model.bin", backend: :reference))

      assert %{reason: :io} = err(HexagonTpu.load_model({:file, tmp_dir!()}, backend: :reference))

      corrupt = Path.join(tmp_dir!(), "corrupt.bin")
      File.write!(corrupt, :binary.copy(<<0xAB, 0, 1>>, 100))

      assert %{
               reason: :model,
               qnn_code: 30010,
               qnn_name: "QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY"
             } = err(HexagonTpu.load_model(corrupt, backend: :reference))

      good = build!(add_f32())
      truncated = binary_part(good, 0, div(byte_size(good), 2))

      assert %{reason: :model} =
               err(HexagonTpu.load_model({:binary, truncated}, backend: :reference))

      assert %{reason: r} = err(HexagonTpu.load_model({:binary, <<>>}, backend: :reference))
      assert r in [:invalid_argument, :model]
    end

    test "bad sources and handles" do
      rt = Runtime.open!(backend: :reference)
      assert %{reason: :invalid_argument} = err(Context.load(rt, 123))
      assert %{reason: :invalid_argument} = err(Context.load(:rt, "x.bin"))
      assert %{reason: :invalid_argument} = err(Graph.open(:ctx))
    end

    test "a forged handle is not a hexagon_tpu handle, never a 'purged copy'", %{add: add} do
      rt = Runtime.open!(backend: :reference)
      ctx = Context.load!(rt, {:binary, build!(add_f32())})
      {:ok, io} = Graph.alloc_io(add)
      x = f32([1, 2, 3, 4])
      not_ours = "the reference was not made by this library"

      # {struct, what the message must say}: made by hand, another kind, not a reference
      graphs = [
        {%{add | ref: make_ref()}, not_ours},
        {%{add | ref: ctx.ref}, "it is a context handle"},
        {%{add | ref: rt.ref}, "it is a runtime handle"},
        {%{add | ref: io.ref}, "it is a shared IO buffer handle"},
        {%{add | ref: "x"}, "expected a reference, got a term that is not one"}
      ]

      for {g, detail} <- graphs,
          call <- [
            fn -> HexagonTpu.predict(g, [x, x]) end,
            fn -> HexagonTpu.predict(g, [x, x], scheduler: :dirty_io) end,
            fn -> HexagonTpu.predict_batch(g, [x, x]) end,
            fn -> Graph.alloc_io(g) end,
            fn -> Graph.timing(g) end,
            fn -> HexagonTpu.predict(g, io) end
          ] do
        e = err(call.())
        assert e.reason == :invalid_argument
        assert e.message =~ "not a hexagon_tpu graph handle: #{detail}"
        refute e.message =~ "purged"
      end

      for {c, detail} <- [
            {%{ctx | ref: make_ref()}, not_ours},
            {%{ctx | ref: add.ref}, "it is a graph handle"},
            {%{ctx | ref: nil}, "expected a reference"}
          ] do
        e = err(Graph.open(c))
        assert e.reason == :invalid_argument
        assert e.message =~ "not a hexagon_tpu context handle: #{detail}"
      end

      for {r, detail} <- [
            {%{rt | ref: make_ref()}, not_ours},
            {%{rt | ref: ctx.ref}, "it is a context handle"}
          ],
          call <- [
            fn -> Context.load(r, {:binary, build!(add_f32())}) end,
            fn -> HexagonTpu.load_model({:binary, build!(add_f32())}, runtime: r) end,
            fn -> Runtime.set_perf_profile(r, :burst) end
          ] do
        e = err(call.())
        assert e.reason == :invalid_argument
        assert e.message =~ "not a hexagon_tpu runtime handle: #{detail}"
      end

      for {forged, detail} <- [
            {%{io | ref: make_ref()}, not_ours},
            {%{io | ref: add.ref}, "it is a graph handle"}
          ],
          call <- [
            fn -> HexagonTpu.SharedIO.write_input(forged, 0, x) end,
            fn -> HexagonTpu.SharedIO.read_output(forged, 0, output: :binary) end,
            fn -> HexagonTpu.predict(add, forged) end
          ] do
        e = err(call.())
        assert e.reason == :invalid_argument
        assert e.message =~ "not a hexagon_tpu shared IO buffer handle: #{detail}"
      end

      HexagonTpu.SharedIO.close(io)
      Context.close(ctx)
      Runtime.close(rt)
    end

    test "a path with a NUL byte is refused, not cut at the NUL" do
      rt = Runtime.open!(backend: :reference)
      e = err(Context.load(rt, {:file, "a\0b"}))
      assert e.reason == :invalid_argument
      assert e.message =~ "without NUL bytes"

      assert %{reason: :invalid_argument} =
               err(HexagonTpu.load_model({:file, "a\0b"}, backend: :reference))
    end

    test "backend library that does not load names the stage and path" do
      e = err(Runtime.open(backend: "/nonexistent/libQnnHtp.so"))
      assert e.reason == :load_backend
      assert e.message =~ "/nonexistent/libQnnHtp.so"
    end
  end
end
