defmodule HexagonTpu.ServingBatchInputTest do
  use ExUnit.Case, async: true

  # Requests as Nx.Batch, the form Ortex.Serving's and Bumblebee's callers write, against the
  # same rows as plain tensors and against predict_batch/3. Runs only with Nx.
  @moduletag :nx
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:nx)
  @compile {:no_warn_undefined, [Nx, Nx.Serving, Nx.Batch]}

  import HexagonTpu.TestModels
  alias HexagonTpu.Error

  # one input (scale_u8: x u8 [1,4]) and two of different quantizations (ab)
  @graphs """
  graph one
    input x u8 [1,4] scale=0.1 zero_point=128
    output y f32 [1,4]
    op Relu x -> y
  graph ab
    input a u8 [1,4] scale=0.1 zero_point=128
    input b u8 [1,4] scale=0.5 zero_point=0
    output y f32 [1,4]
    op ElementWiseAdd a b -> y
  """

  setup_all do
    bin = build!(@graphs)
    load = &HexagonTpu.load_model!({:binary, bin}, backend: :reference, graph: &1)
    %{one: load.("one"), ab: load.("ab")}
  end

  defp t(rows), do: Nx.tensor(rows, type: {:f, 32})
  defp flat(outputs), do: Enum.map(outputs, &Nx.to_flat_list/1)

  defp direct(model, inputs) do
    {:ok, outputs} = HexagonTpu.predict_batch(model, inputs, output: :nx)
    flat(outputs)
  end

  test "one input: Nx.Batch.stack and Nx.Batch.concatenate", %{one: one} do
    serving = HexagonTpu.Serving.new(one, batch_size: 8)
    rows = [t([1, -2, 3, 4]), t([0.5, 6, -7, 8])]
    want = direct(one, [Nx.stack(rows)])

    assert flat(Nx.Serving.run(serving, Nx.Batch.stack(rows))) == want

    assert flat(
             Nx.Serving.run(serving, Nx.Batch.concatenate(Enum.map(rows, &Nx.new_axis(&1, 0))))
           ) == want

    # padding is not the caller's rows
    padded = rows |> Nx.Batch.stack() |> Nx.Batch.pad(3)
    assert flat(Nx.Serving.run(serving, padded)) == want
  end

  test "several inputs: a batch of tuples, or a batch per input", %{ab: ab} do
    serving = HexagonTpu.Serving.new(ab, batch_size: 8)
    a = [t([1, 2, -3, 0.5]), t([0, 0.1, 0.2, 0.3])]
    b = [t([10, 20, 30, 0.5]), t([1, 2, 3, 4])]
    want = direct(ab, [Nx.stack(a), Nx.stack(b)])

    tuples = Nx.Batch.stack(Enum.zip(a, b))
    assert flat(Nx.Serving.run(serving, tuples)) == want
    assert flat(Nx.Serving.run(serving, [Nx.Batch.stack(a), Nx.Batch.stack(b)])) == want
    # a batch for one input, a tensor for the other
    assert flat(Nx.Serving.run(serving, [Nx.Batch.stack(a), Nx.stack(b)])) == want

    name = :"serving_batch_input_#{System.unique_integer([:positive])}"
    start_supervised!({Nx.Serving, serving: serving, name: name})
    assert flat(Nx.Serving.batched_run(name, tuples)) == want
    assert {:ok, got} = HexagonTpu.Serving.batched_run(name, tuples)
    assert flat(got) == want
  end

  test "bad batches are clear errors", %{ab: ab} do
    serving = HexagonTpu.Serving.new(ab, batch_size: 8)
    a = t([1, 2, 3, 4])

    assert_raise Error, ~r/empty Nx.Batch/, fn -> Nx.Serving.run(serving, Nx.Batch.new()) end

    assert_raise Error, ~r/must hold one tensor per entry.*got 2/, fn ->
      Nx.Serving.run(serving, [Nx.Batch.stack([{a, a}]), Nx.Batch.stack([a])])
    end

    # a batch of one tensor for a graph of two inputs: the count is wrong, as for a tensor
    assert_raise Error, ~r/graph .ab. expects 2 input\(s\) \(a, b\), got 1/, fn ->
      Nx.Serving.run(serving, Nx.Batch.stack([a]))
    end
  end
end
