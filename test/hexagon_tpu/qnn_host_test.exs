defmodule HexagonTpu.QnnHostTest do
  # The host path (docs/reliability.md, "The host path"): the runtime and introspection against
  # a real QAIRT SDK's x86-64 host libraries instead of the reference backend. Excluded unless
  # asked for: `mix test --include qnn_host` with QNN_HOST_LIB_DIR (or QNN_SDK_ROOT, whose
  # lib/x86_64-linux-clang is taken) naming the libraries and QNN_HOST_BINARY a real context
  # binary or ONNX EPContext model (ONNX Runtime's test models are such; QNN_HOST_GRAPH names the
  # graph whose context to load when the model holds several). The backend is the
  # first there of libQnnHtp.so (the SDK's HTP emulator, which executes binaries),
  # libQnnCpu.so and libQnnSaver.so (which cannot load context binaries: the refusal is reported
  # as what it is). Nothing of the SDK is in the repository.
  use ExUnit.Case, async: false
  @moduletag :qnn_host

  alias HexagonTpu.{Context, Error, Graph, Runtime}

  @backends [{"libQnnHtp.so", 6}, {"libQnnCpu.so", 3}, {"libQnnSaver.so", 2}]

  setup_all do
    dir =
      System.get_env("QNN_HOST_LIB_DIR") ||
        (System.get_env("QNN_SDK_ROOT") &&
           Path.join(System.get_env("QNN_SDK_ROOT"), "lib/x86_64-linux-clang")) ||
        flunk(
          "--include qnn_host needs QNN_HOST_LIB_DIR (or QNN_SDK_ROOT) naming the SDK's " <>
            "x86-64 host libraries"
        )

    system = Path.join(dir, "libQnnSystem.so")
    File.regular?(system) || flunk("no libQnnSystem.so in #{dir}")

    {backend, id} =
      Enum.find(@backends, fn {lib, _} -> File.regular?(Path.join(dir, lib)) end) ||
        flunk("no host backend (libQnnHtp.so, libQnnCpu.so or libQnnSaver.so) in #{dir}")

    # QNN's Saver backend writes saver_output/ in the current directory: not the repository's
    cwd = File.cwd!()
    tmp = Path.join(System.tmp_dir!(), "htpu_qnn_host_#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    File.cd!(tmp)
    on_exit(fn -> File.cd!(cwd) end)
    %{backend: Path.join(dir, backend), id: id, system: system}
  end

  defp open!(ctx), do: Runtime.open!(backend: ctx.backend, system_library: ctx.system)

  test "the host backend's runtime opens, says what it is, and closes", ctx do
    rt = open!(ctx)
    info = Runtime.info(rt)

    IO.puts(
      "qnn_host: #{inspect(Map.take(info, [:provider_name, :backend_id, :build_id, :core_api_version, :system_api_version, :has_device]))}"
    )

    assert info.backend_id == ctx.id
    assert info.build_id =~ ~r/^v2\.\d+\.\d+\.\d+_\d+$/
    assert {1, _, _} = info.system_api_version
    assert :ok = Runtime.close(rt)
    assert {:error, %Error{reason: :closed}} = Context.load(rt, {:binary, "x"})
  end

  test "the host system library refuses bytes that are no context binary", ctx do
    rt = open!(ctx)
    bytes = :binary.copy(<<0, 0, 0, 2, 0xFF>>, 64)

    assert {:error, %Error{reason: :model, qnn_code: code, message: msg}} =
             Context.load(rt, {:binary, bytes})

    IO.puts("qnn_host: a non-binary: #{msg}")
    assert code in [30_002, 30_010]
    Runtime.close(rt)
  end

  test "a real binary: read by the host system library, then run or refused as it is", ctx do
    path =
      System.get_env("QNN_HOST_BINARY") ||
        flunk("set QNN_HOST_BINARY to a real QNN context binary or ONNX EPContext model")

    rt = open!(ctx)

    case Context.load(rt, path, graph: System.get_env("QNN_HOST_GRAPH")) do
      {:ok, c} when ctx.id == 6 ->
        # the HTP emulator executes it: every graph, zero inputs in their own types, f32 outputs
        for name <- Context.graph_names(c) do
          g = Graph.open!(c, graph: name)
          inputs = Enum.map(Graph.inputs(g), &:binary.copy(<<0>>, &1.byte_size))
          assert {:ok, outs} = Graph.execute(g, inputs, output: :binary)

          assert Enum.map(outs, &byte_size/1) ==
                   Enum.map(Graph.outputs(g), &(&1.num_elements * 4))
        end

      {:error, %Error{reason: :incompatible, message: msg}} when ctx.id != 6 ->
        # read by the real system library (it says the binary is HTP's), refused before QNN
        IO.puts("qnn_host: #{Path.basename(ctx.backend)} refuses #{path}: #{msg}")
        assert msg =~ "built for QNN backend id 6, this runtime's backend is id #{ctx.id}"

      other ->
        flunk("#{Path.basename(ctx.backend)} on #{path}: #{inspect(other)}")
    end

    Runtime.close(rt)
  end
end
