defmodule HexagonTpu.DocExamples do
  # What the documentation's examples need, and the list of what they must cover.
  @moduledoc false

  import ExUnit.Assertions

  # The modules HexDocs shows (every module of the application whose docs are not hidden).
  def public_modules do
    {:ok, modules} = :application.get_key(:hexagon_tpu, :modules)

    for m <- Enum.sort(modules), match?({:docs_v1, _, _, _, %{}, _, _}, Code.fetch_docs(m)), do: m
  end

  # Every documented function of `module`: {name, arity, defaults, doc text}.
  def public_functions(module) do
    {:docs_v1, _, _, _, _, _, docs} = Code.fetch_docs(module)

    for {{kind, name, arity}, _, _, doc, meta} <- docs,
        kind in [:function, :macro],
        doc != :hidden,
        do: {name, arity, Map.get(meta, :defaults, 0), doc_text(doc)}
  end

  defp doc_text(%{"en" => text}), do: text
  defp doc_text(_none), do: nil

  # A directory of its own holding add.bin (examples/add.txt, the README's model, also there),
  # made the
  # current directory for the doctests that load it; the previous one is returned.
  def enter_model_dir do
    dir = Path.join(HexagonTpu.TestModels.tmp_dir!(), "doc_examples")
    File.mkdir_p!(dir)
    text = File.read!(Path.expand("../../examples/add.txt", __DIR__))
    File.write!(Path.join(dir, "add.txt"), text)
    File.write!(Path.join(dir, "add.bin"), HexagonTpu.TestModels.build!(text))
    previous = File.cwd!()
    File.cd!(dir)
    assert File.exists?("add.bin")
    previous
  end
end

defmodule HexagonTpu.DocExamplesTest do
  # The examples in the documentation run, as doctests. Those that need a model load
  # "add.bin" from the current directory: this module is not async, so it runs alone, after
  # the async modules, in a directory of its own (setup_all).
  use ExUnit.Case, async: false

  alias HexagonTpu.DocExamples

  setup_all do
    previous = DocExamples.enter_model_dir()
    on_exit(fn -> File.cd!(previous) end)
  end

  doctest HexagonTpu
  doctest HexagonTpu.Call
  doctest HexagonTpu.Context
  doctest HexagonTpu.Error
  doctest HexagonTpu.Graph
  doctest HexagonTpu.Vision
  doctest HexagonTpu.Vision.Frame
  doctest HexagonTpu.Monitor
  doctest HexagonTpu.Profile
  doctest HexagonTpu.Runtime
  doctest HexagonTpu.SharedIO
  doctest HexagonTpu.Stats
  doctest HexagonTpu.Telemetry
  doctest HexagonTpu.TensorInfo

  test "every public function has a @doc, a @spec and an example that runs" do
    missing =
      for module <- DocExamples.public_modules(),
          {name, arity, defaults, doc} <- DocExamples.public_functions(module),
          problem <- problems(module, name, arity, defaults, doc),
          do: "#{inspect(module)}.#{name}/#{arity}: #{problem}"

    assert missing == []
  end

  test "every public module's examples are run here or by the Nx suite" do
    run = [
      HexagonTpu,
      HexagonTpu.Call,
      HexagonTpu.Context,
      HexagonTpu.Error,
      HexagonTpu.Graph,
      HexagonTpu.Monitor,
      HexagonTpu.Profile,
      HexagonTpu.Runtime,
      HexagonTpu.SharedIO,
      HexagonTpu.Stats,
      HexagonTpu.Telemetry,
      HexagonTpu.TensorInfo,
      HexagonTpu.Vision,
      HexagonTpu.Vision.Frame
    ]

    assert DocExamples.public_modules() -- run == [HexagonTpu.Serving]
  end

  defp problems(module, name, arity, defaults, doc) do
    {:ok, specs} = Code.Typespec.fetch_specs(module)
    spec? = Enum.any?((arity - defaults)..arity, &List.keymember?(specs, {name, &1}, 0))

    [
      if(doc == nil, do: "no @doc"),
      if(not spec?, do: "no @spec"),
      if(doc != nil and not String.contains?(doc, "iex> "), do: "no example (iex>)")
    ]
    |> Enum.reject(&is_nil/1)
  end
end

# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.DocExamplesNxTest do
    # The examples of HexagonTpu.Serving need Nx: they run in the suite that has it.
    use ExUnit.Case, async: false

    @moduletag :nx
    @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)
    # The doctests call Nx, which the suite without it does not have.

    setup_all do
      previous = HexagonTpu.DocExamples.enter_model_dir()
      on_exit(fn -> File.cd!(previous) end)
    end

    doctest HexagonTpu.Serving
  end
end
