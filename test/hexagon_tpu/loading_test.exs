defmodule HexagonTpu.LoadingTest do
  # Many models resident, small and quick to come up: only the graphs asked for, binaries held
  # once (mapped, copied or lent), a shared spill-fill buffer, several models in one call; each
  # checked against the reference backend's own account (its control API's :stats, process-
  # wide: not async) and the models' answers against the arithmetic.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Error, Graph, NIF, Runtime}

  # Two graphs of their own names (the backend's "newest context with the graph" is ours), and
  # a graph whose activations need a spill-fill buffer of 8 x 256 floats.
  @two String.replace(two_graphs(), ["graph add_f32", "graph scale_u8"], fn
         "graph add_f32" -> "graph ld_add"
         "graph scale_u8" -> "graph ld_scale"
       end)
  @spill """
  graph ld_spill
    input x f32 [1,256]
    native t1 f32 [1,256]
    native t2 f32 [1,256]
    output y f32 [1,256]
    op Relu x -> t1
    op Relu t1 -> t2
    op Relu t2 -> y
  """

  setup_all do
    %{two: build!(@two), spill: build!(@spill)}
  end

  setup do
    on_exit(&reset_ref_controls/0)
  end

  defp ref_stats do
    {:ok, s} = NIF.ref_control(ref_backend_lib(), :stats)
    s
  end

  defp floats(bin), do: for(<<v::float-32-native <- bin>>, do: v)

  # ld_add: a + b
  defp add_ok?(model) do
    {:ok, [y]} =
      HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([10, 20, 30, 40])], output: :binary)

    floats(y) == [11.0, 22.0, 33.0, 44.0]
  end

  describe "only the graphs asked for" do
    test "load_model(graph:) deserializes that graph alone", %{two: two} do
      rt = Runtime.open!(backend: :reference)
      d0 = ref_stats().graphs_deserialized
      m = HexagonTpu.load_model!({:binary, two}, runtime: rt, graph: "ld_add")
      assert ref_stats().graphs_deserialized == d0 + 1
      assert %{graphs_enabled: 1, enable_graphs_passed: true, binary: :lent} = m.model_info.load
      assert add_ok?(m)
      HexagonTpu.close(m)

      ctx = Context.load!(rt, {:binary, two})
      assert ref_stats().graphs_deserialized == d0 + 3
      Context.close(ctx)
      Runtime.close(rt)
    end

    test "a graph not asked for is refused at open, naming the option", %{two: two} do
      rt = Runtime.open!(backend: :reference)
      ctx = Context.load!(rt, {:binary, two}, graphs: ["ld_scale"])
      assert {:error, %Error{reason: :not_found, message: msg}} = Graph.open(ctx, graph: "ld_add")
      assert msg =~ "graph 'ld_add' was not loaded"
      assert msg =~ ":graph or :graphs option"
      # the only graph it holds opens without a name
      assert {:ok, g} = Graph.open(ctx)
      assert g.name == "ld_scale"

      assert {:error, %Error{reason: :not_found, message: msg}} =
               Context.load(rt, {:binary, two}, graphs: ["ld_add", "nope"])

      assert msg =~ "the binary holds no graph 'nope' (entry 1 of the graphs option)"

      # the model options' :graph is named as such
      assert {:error, %Error{reason: :not_found, message: msg}} =
               HexagonTpu.load_model({:binary, two}, runtime: rt, graph: "nope")

      assert msg =~ "the binary holds no graph 'nope' (the graph option); it holds 'ld_add'"

      for bad <- [[], ["a\0b"], "ld_add", [:ld_add]] do
        assert {:error, %Error{reason: :invalid_option}} =
                 Context.load(rt, {:binary, two}, graphs: bad)
      end

      Graph.close(g)
      Context.close(ctx)
      Runtime.close(rt)
    end

    test "without the capability every graph loads, the API stays the same", %{two: two} do
      ref_capability(206, 1000)
      rt = Runtime.open!(backend: :reference)
      refute Runtime.info(rt).enable_graphs
      d0 = ref_stats().graphs_deserialized
      ctx = Context.load!(rt, {:binary, two}, graphs: ["ld_add"])
      assert ref_stats().graphs_deserialized == d0 + 2
      assert {:ok, %{graphs_enabled: 1, enable_graphs_passed: false}} = Context.load_info(ctx)
      assert {:error, %Error{reason: :not_found}} = Graph.open(ctx, graph: "ld_scale")
      Context.close(ctx)
      Runtime.close(rt)
    end
  end

  describe "the binary, held once" do
    test "a file on a writable file system is copied and can be rewritten under the model",
         %{two: two} do
      path = Path.join(tmp_dir!(), "ld_rewrite.bin")
      File.write!(path, two)
      rt = Runtime.open!(backend: :reference)
      m = HexagonTpu.load_model!(path, runtime: rt, graph: "ld_add")
      assert %{binary: :copied, binary_note: "copied: on " <> _} = m.model_info.load
      File.write!(path, "garbage")
      assert add_ok?(m)
      HexagonTpu.close(m)

      ctx = Context.load!(rt, path |> tap(&File.write!(&1, two)), mapping: :copy)
      assert {:ok, %{binary_note: "copied: the load asked for a copy"}} = Context.load_info(ctx)
      Context.close(ctx)
      Runtime.close(rt)
    end

    test "{:binary, bytes} is referenced, not copied, by the library or the backend",
         %{two: two} do
      rt = Runtime.open!(backend: :reference)
      assert Runtime.info(rt).persistent_binary
      ctx = Context.load!(rt, {:binary, two}, memory_limit_mb: 32)

      assert {:ok,
              %{
                binary: :lent,
                binary_copy_bytes: 0,
                persistent_binary: true,
                memory_limit_mb: 32,
                memory_limit_passed: true
              }} = Context.load_info(ctx)

      assert ref_stats().binary_copy_bytes == 0
      Context.close(ctx)

      # QNN's hint is MB in 64 bits: up to 2^44 - 1, whose bytes still fit them (as in C)
      max = Bitwise.bsl(1, 44) - 1
      ctx = Context.load!(rt, {:binary, two}, memory_limit_mb: max)
      assert {:ok, %{memory_limit_mb: ^max, memory_limit_passed: true}} = Context.load_info(ctx)
      Context.close(ctx)

      for bad <- [0, -1, max + 1, Bitwise.bsl(1, 64) - 1, 1.5] do
        assert {:error, %Error{reason: :invalid_option, message: msg}} =
                 Context.load(rt, {:binary, two}, memory_limit_mb: bad)

        assert msg =~ "expected :memory_limit_mb to be a positive integer (MB) up to 2^44 - 1"
      end

      assert {:error, %Error{reason: :invalid_option}} =
               Context.load(rt, {:binary, two}, mapping: :mmap)

      Runtime.close(rt)
    end
  end

  describe "a shared spill-fill buffer" do
    test "the models of a runtime share one when asked (off by default)", %{spill: spill} do
      rt = Runtime.open!(backend: :reference)
      refute Runtime.info(rt).spill_fill_sharing
      assert Runtime.info(rt).spill_fill_note =~ "off, the default"
      model = HexagonTpu.load_model!({:binary, spill}, runtime: rt)
      assert model.model_info.load.spill_fill_group == nil
      # each note names the Elixir option, not the C one
      for note <- [Runtime.info(rt).spill_fill_note, model.model_info.load.spill_fill_note] do
        assert note =~ "the runtime option `spill_fill_sharing: true` turns it on"
        refute note =~ "htpu_runtime_options"
      end

      HexagonTpu.close(model)
      Runtime.close(rt)

      rt = Runtime.open!(backend: :reference, spill_fill_sharing: true)
      assert Runtime.info(rt).spill_fill_sharing
      models = for _ <- 1..3, do: HexagonTpu.load_model!({:binary, spill}, runtime: rt)
      groups = Enum.map(models, & &1.model_info.load.spill_fill_group)
      assert [g, g, g] = groups
      assert g != nil
      assert ref_stats().spill_fill_bytes == 8 * 256
      Enum.each(models, &HexagonTpu.close/1)
      Runtime.close(rt)

      rt = Runtime.open!(backend: :reference, spill_fill_sharing: false)
      refute Runtime.info(rt).spill_fill_sharing
      assert Runtime.info(rt).spill_fill_note =~ "spill_fill_sharing"
      models = for _ <- 1..3, do: HexagonTpu.load_model!({:binary, spill}, runtime: rt)
      assert Enum.all?(models, &(&1.model_info.load.spill_fill_group == nil))
      assert ref_stats().spill_fill_bytes == 3 * 8 * 256
      Enum.each(models, &HexagonTpu.close/1)
      Runtime.close(rt)
    end

    test "a group's buffer is the spill-fill the binary reports", %{spill: spill} do
      rt = Runtime.open!(backend: :reference, spill_fill_sharing: true)
      ctx = Context.load!(rt, {:binary, spill})
      [%{memory: %{spill_fill_bytes: reported}}] = Context.graphs(ctx)
      {:ok, load} = Context.load_info(ctx)
      assert reported == 8 * 256
      assert load.spill_fill_bytes == reported
      assert load.spill_fill_group != nil
      assert load.spill_fill_group_bytes == reported
      assert ref_stats().spill_fill_bytes == reported
      Context.close(ctx)
      Runtime.close(rt)
    end
  end
end
