defmodule HexagonTpu.DigitsDemoTest do
  # The digits model (models/digits/) through the Elixir API, and examples/digits.exs itself.
  # The reference backend is deterministic, so the counts are exact: 523 of the 539 held-out
  # images right, the same class as the float model for all 539 (models/digits/README.md).
  use ExUnit.Case, async: true

  alias HexagonTpu.Graph

  @dir Path.expand("../../models/digits", __DIR__)
  @script Path.expand("../../examples/digits.exs", __DIR__)

  defp read(name), do: File.read!(Path.join(@dir, name))

  test "523/539 correct and 539/539 agreeing with the float model, f32 in and out" do
    model = HexagonTpu.load_model!(Path.join(@dir, "digits.bin"), backend: :reference)
    assert [%{name: "image", dtype: :u8, num_elements: 64}] = Graph.inputs(model)
    assert [%{name: "logits", dtype: :u8, num_elements: 10}] = Graph.outputs(model)

    labels = :binary.bin_to_list(read("test_y.u8"))
    float_pred = :binary.bin_to_list(read("float_pred.u8"))
    x = read("test_x.f32")
    assert length(labels) == 539 and byte_size(x) == 539 * 64 * 4

    preds =
      for <<row::binary-size(256) <- x>> do
        {:ok, [scores]} = HexagonTpu.predict(model, [row], output: :binary)
        values = for <<v::float-32-native <- scores>>, do: v
        assert length(values) == 10
        Enum.find_index(values, &(&1 == Enum.max(values)))
      end

    count = fn a, b -> Enum.zip(a, b) |> Enum.count(fn {p, q} -> p == q end) end
    assert count.(preds, labels) == 523
    assert count.(float_pred, labels) == 523
    assert count.(preds, float_pred) == 539
    HexagonTpu.close(model)
  end

  # Runs the example script in a fresh VM on this build's code, the way a user would get its
  # output, and checks the report and the exit status.
  test "examples/digits.exs prints 97.03% (523/539) and exits 0" do
    elixir = System.find_executable("elixir") || flunk("elixir is not on PATH")
    ebin = Path.join(Mix.Project.app_path(), "ebin")

    {out, status} = System.cmd(elixir, ["-pa", ebin, @script], stderr_to_stdout: true)

    assert status == 0, out
    assert out =~ "samples  539 (held-out)"
    assert out =~ "accuracy 97.03% (523/539)"
    assert out =~ "float    97.03% (523/539)"
    assert out =~ "agree    100.00% (539/539)"
    assert out =~ ~r/graphExecute\s+p50\s+\d+\.\d/
    assert out =~ "OK: >= 95%"
  end
end

defmodule HexagonTpu.DigitsServingTest do
  # examples/digits_serving.exs: the same images through Nx.Serving.batched_run/2 from 64
  # concurrent callers, the same 523/539 as predict/3 one by one.
  use ExUnit.Case, async: true

  @moduletag :nx
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)

  @script Path.expand("../../examples/digits_serving.exs", __DIR__)

  test "examples/digits_serving.exs prints 97.03% (523/539) and exits 0" do
    elixir = System.find_executable("elixir") || flunk("elixir is not on PATH")
    ebin = Path.join(Mix.Project.app_path(), "ebin")

    {out, status} = System.cmd(elixir, ["-pa", ebin, @script], stderr_to_stdout: true)

    assert status == 0, out
    assert out =~ "through Nx.Serving.batched_run"
    assert out =~ "accuracy 97.03% (523/539)"
    assert out =~ "agree    100.00% (539/539)"
    assert out =~ "OK: >= 95%"
  end
end
