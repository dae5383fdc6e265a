defmodule HexagonTpu.EPContextTest do
  # ONNX EPContext models (docs/context-binaries.md, route C) through load_model/2 and
  # Context.load/3: they answer as the raw binary, Context.info/1's :source carries the file's
  # facts (class names as a list), several contexts need :graph, external binaries stay in the
  # model's folder, a QDQ model and a truncated file are clear errors. The models are written by
  # test/support/epcontext.py, the tests' own ONNX writer.
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Error, Runtime}

  @two String.replace(add_f32(), "graph add_f32", "graph add_two")
  @writer Path.expand("../support/epcontext.py", __DIR__)

  setup_all do
    dir = Path.join(tmp_dir!(), "epc_#{System.unique_integer([:positive])}")
    File.mkdir_p!(Path.join(dir, "sub"))
    add = Path.join(dir, "add.bin")
    File.write!(add, build!(add_f32()))
    two = Path.join(dir, "two.bin")
    File.write!(two, build!(@two))
    File.cp!(add, Path.join([dir, "sub", "model.bin"]))
    %{dir: dir, add: add, two: two}
  end

  defp write_model!(path, args) do
    {out, status} = System.cmd("python3", [@writer, path | args], stderr_to_stdout: true)
    assert status == 0, out
    path
  end

  defp answer(model), do: add(model) |> then(fn {:ok, [y]} -> from_f32(y) end)

  test "an embedded model answers as the raw binary; :source carries its facts", ctx do
    path =
      write_model!(Path.join(ctx.dir, "yolo_qnn.onnx"), [
        "--node",
        "yolo_ctx",
        "--embed",
        ctx.add,
        "--attr",
        "source=QNNExecutionProvider",
        "--attr",
        "ep_sdk_version=v2.48.40.250101_1",
        "--prop",
        "names={0: 'person', 1: \"it's\", 2: 'caf\\xe9'}",
        "--prop",
        "task=detect"
      ])

    raw = HexagonTpu.load_model!(ctx.add, backend: :reference, graph: "add_f32")
    model = HexagonTpu.load_model!(path, backend: :reference)
    assert answer(model) == answer(raw)
    assert answer(model) == [2.0, 3.0, 4.0, 5.0]

    rt = Runtime.open!(backend: :reference)
    c = Context.load!(rt, path)
    src = Context.info(c).source
    assert src.format == "onnx-epcontext"
    assert src.class_names == ["person", "it's", "café"]
    assert src.metadata["task"] == "detect"
    assert src.contexts == 1 and src.context == 0

    assert [%{name: "yolo_ctx", main_context: true, embed_mode: true, cache_file: nil}] =
             src.nodes

    assert hd(src.nodes).ep_sdk_version == "v2.48.40.250101_1"
    assert hd(src.nodes).cache_bytes == File.stat!(ctx.add).size
    assert Context.info(Context.load!(rt, ctx.add)).source == nil
    # the same bytes from memory
    assert Context.graph_names(Context.load!(rt, {:binary, File.read!(path)})) == ["add_f32"]

    Runtime.close(rt)
  end

  test "a metadata key given twice means its last value, in :metadata and :class_names", ctx do
    path =
      write_model!(Path.join(ctx.dir, "dup.onnx"), [
        "--node",
        "ctx",
        "--embed",
        ctx.add,
        "--prop",
        "names={0: 'first'}",
        "--prop",
        "names={0: 'last', 1: 'too'}"
      ])

    rt = Runtime.open!(backend: :reference)
    src = Context.info(Context.load!(rt, path)).source
    assert src.metadata["names"] == "{0: 'last', 1: 'too'}"
    assert src.class_names == ["last", "too"]
    Runtime.close(rt)
  end

  test "several contexts: :graph chooses; without it the error lists them", ctx do
    path =
      write_model!(Path.join(ctx.dir, "both.onnx"), [
        "--node",
        "first",
        "--embed",
        ctx.add,
        "--node",
        "second",
        "--embed",
        ctx.two
      ])

    assert {:error, %Error{reason: :invalid_argument, message: msg}} =
             HexagonTpu.load_model(path, backend: :reference)

    assert msg =~ "holds 2 context binaries; name the graph"
    assert msg =~ "context 1 (node 'second'): add_two"
    model = HexagonTpu.load_model!(path, backend: :reference, graph: "add_two")
    assert answer(model) == [2.0, 3.0, 4.0, 5.0]

    assert {:error, %Error{reason: :not_found}} =
             HexagonTpu.load_model(path, backend: :reference, graph: "nope")

    rt = Runtime.open!(backend: :reference)
    c = Context.load!(rt, path, graph: "add_two")
    assert Context.graph_names(c) == ["add_two"]
    assert Context.info(c).source.context == 1

    # :graph chooses the binary and :graphs what of it loads: :graph must be among them
    c = Context.load!(rt, path, graph: "add_two", graphs: ["add_two"])
    assert Context.info(c).source.context == 1

    assert {:error, %Error{reason: :invalid_option, message: msg}} =
             Context.load(rt, path, graph: "add_two", graphs: ["add_f32"])

    assert msg ==
             "HexagonTpu.Context.load/3: expected :graph (\"add_two\", which chooses the " <>
               "context binary) to be one of :graphs (the graphs loaded from it), got " <>
               "[\"add_f32\"]; one load takes one context binary"

    # one load takes one context: a graph of the other is not in the chosen binary
    assert {:error, %Error{reason: :not_found, message: msg}} =
             Context.load(rt, path, graph: "add_two", graphs: ["add_two", "add_f32"])

    assert msg =~ "graph 'add_f32' (entry 1 of the graphs option) is in context 0"
    assert msg =~ "one load makes one context"
    Runtime.close(rt)
  end

  test "an external binary is read from the model's folder only", ctx do
    path =
      write_model!(Path.join(ctx.dir, "ext.onnx"), ["--node", "e", "--external", "sub/model.bin"])

    model = HexagonTpu.load_model!(path, backend: :reference, graph: "add_f32")
    assert answer(model) == [2.0, 3.0, 4.0, 5.0]
    # from memory there is no folder to read it from
    assert {:error, %Error{reason: :invalid_argument, message: msg}} =
             HexagonTpu.load_model({:binary, File.read!(path)}, backend: :reference)

    assert msg =~ "open the model by its path"

    for {name, why} <- [{"../add.bin", "has a '..' component"}, {"/etc/passwd", "absolute path"}] do
      bad = write_model!(Path.join(ctx.dir, "bad.onnx"), ["--node", "e", "--external", name])

      assert {:error, %Error{reason: :model, message: msg}} =
               HexagonTpu.load_model(bad, backend: :reference)

      assert msg =~ why
    end
  end

  test "a QDQ model and a truncated file are clear errors", ctx do
    qdq = write_model!(Path.join(ctx.dir, "qdq.onnx"), ["--op", "QuantizeLinear", "--op", "Conv"])

    assert {:error, %Error{reason: :unsupported, message: msg}} =
             HexagonTpu.load_model(qdq, backend: :reference)

    assert msg =~ "without an EPContext node (2 nodes: QuantizeLinear, Conv)"
    assert msg =~ "docs/context-binaries.md"

    full =
      File.read!(
        write_model!(Path.join(ctx.dir, "full.onnx"), ["--node", "n", "--embed", ctx.add])
      )

    assert {:error, %Error{reason: :model, message: msg}} =
             HexagonTpu.load_model({:binary, binary_part(full, 0, 200)}, backend: :reference)

    assert msg =~ "is not a readable ONNX model"
  end
end
