defmodule HexagonTpu.PathsAgreeTest do
  # Every path that returns answers - predict/3, predict_async/3 + await/2, stream/3,
  # predict_batch/3 (one call with a batch multiple, and chunked) and, with Nx,
  # HexagonTpu.Serving - gives what the direct path gives, on a model whose two inputs differ in
  # shape and quantization and are not interchangeable: y = a * b + a, a u8 [1,4] and b u8
  # [1,2,2] (reshaped). The values are exact in both quantizations, so a float reference
  # computed here is the oracle too. Run on the reference backend as it ships (graphExecute, as
  # every HTP release) and with graphExecuteAsync announced (capability 304), where submitted
  # calls go through QNN's async queue.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels

  @model """
  graph mix GRAPHOPTS
    input a u8 [1,4] scale=0.5 zero_point=3
    input b u8 [1,2,2] scale=0.25 zero_point=1
    native bf u8 [1,4] scale=0.25 zero_point=1
    native t f32 [1,4]
    output y f32 [1,4]
    op Reshape b -> bf
    op ElementWiseMultiply a bf -> t
    op ElementWiseAdd t a -> y
  """

  @rows 7

  defp model(opts, env) do
    bin = build!(String.replace(@model, "GRAPHOPTS", opts))
    {:ok, rt} = HexagonTpu.Runtime.open(backend: :reference, env: env)
    assert HexagonTpu.Runtime.info(rt).execute_async == (env != [])
    HexagonTpu.load_model!({:binary, bin}, runtime: rt)
  end

  # row i: a multiples of 0.5 in [-1.5, 126], b multiples of 0.25 in [-0.25, 63.5] (exact in
  # their u8 quantizations), all different per row and per input
  defp x_row(i), do: [i * 0.5, 3.0 - i * 0.5, 2.0 + i, -1.0]
  defp w_row(i), do: [[0.25 * i, 1.5], [2.0, 0.75 + 0.25 * i]]
  defp oracle(i), do: Enum.zip_with(x_row(i), List.flatten(w_row(i)), &(&1 * &2 + &1))

  defp xs, do: f32(Enum.flat_map(0..(@rows - 1), &x_row/1))
  defp ws, do: f32(Enum.flat_map(0..(@rows - 1), &List.flatten(w_row(&1))))

  defp direct(m, i) do
    {:ok, [y]} =
      HexagonTpu.predict(m, [f32(x_row(i)), f32(List.flatten(w_row(i)))], output: :binary)

    from_f32(y)
  end

  for {opts, env} <- [{"", []}, {"batch_multiple=no", []}, {"", [{"HTPU_REF_CAPS", "304=0"}]}] do
    test "every path agrees with the direct path and the float reference (#{inspect(opts)}, #{inspect(env)})" do
      m = model(unquote(opts), unquote(env))
      want = for i <- 0..(@rows - 1), do: direct(m, i)
      assert want == for(i <- 0..(@rows - 1), do: oracle(i))
      assert length(Enum.uniq(want)) == @rows

      # the inputs are not interchangeable: the same bytes swapped give another answer
      {:ok, [swapped]} =
        HexagonTpu.predict(m, [f32(List.flatten(w_row(3))), f32(x_row(3))], output: :binary)

      assert from_f32(swapped) != Enum.at(want, 3)

      calls =
        for i <- 0..(@rows - 1) do
          {:ok, call} =
            HexagonTpu.predict_async(m, [f32(x_row(i)), f32(List.flatten(w_row(i)))],
              output: :binary
            )

          call
        end

      assert Enum.map(calls, fn c ->
               {:ok, [y]} = HexagonTpu.await(c, 10_000)
               from_f32(y)
             end) ==
               want

      streamed =
        HexagonTpu.stream(
          m,
          Enum.map(0..(@rows - 1), &[f32(x_row(&1)), f32(List.flatten(w_row(&1)))]),
          in_flight: 3,
          output: :binary
        )
        |> Enum.map(fn {:ok, [y]} -> from_f32(y) end)

      assert streamed == want

      assert {:ok, [y]} = HexagonTpu.predict_batch(m, [xs(), ws()], output: :binary)
      assert Enum.chunk_every(from_f32(y), 4) == want
      :ok = HexagonTpu.close(m)
    end
  end

  # Compiled only where Nx is loadable (`make test` runs without it): no code here calls a
  # missing Nx.
  if Code.ensure_loaded?(Nx) do
    @tag :nx
    @tag skip: HexagonTpu.TestModels.optional_skip(:nx)
    test "the serving agrees with the direct path" do
      m = model("", [])
      want = for i <- 0..(@rows - 1), do: direct(m, i)
      serving = HexagonTpu.Serving.new(m, batch_size: 4, batch_timeout: 2)
      name = :"paths_agree_serving_#{System.unique_integer([:positive])}"

      {:ok, sup} =
        Supervisor.start_link([{Nx.Serving, serving: serving, name: name}], strategy: :one_for_one)

      got =
        0..(@rows - 1)
        |> Task.async_stream(fn i ->
          x = Nx.tensor([x_row(i)], type: :f32)
          w = Nx.tensor([w_row(i)], type: :f32)
          [y] = Nx.Serving.batched_run(name, [x, w])
          Nx.to_flat_list(y)
        end)
        |> Enum.map(fn {:ok, y} -> y end)

      assert got == want
      Supervisor.stop(sup)
      :ok = HexagonTpu.close(m)
    end
  end
end
