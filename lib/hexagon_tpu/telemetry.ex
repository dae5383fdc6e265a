defmodule HexagonTpu.Telemetry do
  # Emits :telemetry events when the :telemetry module is loadable; a no-op otherwise, so the
  # package has no compile-time dependency on it.
  @moduledoc false

  @compile {:no_warn_undefined, [:telemetry]}

  @doc false
  def execute(graph, start, result) do
    if HexagonTpu.Optional.available?(:telemetry) do
      duration = System.monotonic_time() - start

      {measurements, meta_result} =
        case result do
          {:ok, _outputs, stats} -> {stats, :ok}
          {:ok, _outputs, stats, :no_stats} -> {stats, :ok}
          {:error, %{reason: reason}} -> {%{}, {:error, reason}}
        end

      :telemetry.execute(
        [:hexagon_tpu, :execute],
        Map.put(measurements, :duration, duration),
        %{graph: graph, result: meta_result}
      )
    end

    :ok
  end
end
