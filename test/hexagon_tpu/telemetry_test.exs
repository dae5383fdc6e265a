defmodule HexagonTpu.TelemetryTest do
  use ExUnit.Case, async: true

  # Runs only when :telemetry is loadable (test_helper.exs excludes :telemetry otherwise).
  @moduletag :telemetry
  @compile {:no_warn_undefined, [:telemetry]}

  import HexagonTpu.TestModels

  setup_all do
    {:ok, _} = Application.ensure_all_started(:telemetry)
    :ok
  end

  test "each execute emits [:hexagon_tpu, :execute] with durations and the result" do
    model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
    test = self()
    id = "#{inspect(test)}"

    :ok =
      :telemetry.attach(
        id,
        [:hexagon_tpu, :execute],
        fn name, measurements, meta, _ -> send(test, {:event, name, measurements, meta}) end,
        nil
      )

    on_exit(fn -> :telemetry.detach(id) end)

    {:ok, _} = HexagonTpu.predict(model, [f32([1, 2, 3, 4]), f32([1, 2, 3, 4])], output: :binary)

    assert_receive {:event, [:hexagon_tpu, :execute], %{duration: d, execute_ns: e},
                    %{graph: "add_f32", result: :ok}}

    assert d > 0 and e > 0

    {:error, _} = HexagonTpu.predict(model, [f32([1, 2, 3, 4])])

    assert_receive {:event, [:hexagon_tpu, :execute], %{duration: _},
                    %{result: {:error, :mismatch}}}
  end
end
