defmodule HexagonTpu.Optional do
  # Is an optional dependency (Nx, :telemetry) usable? Asked on every execute, so it must be
  # cheap: Code.ensure_loaded?/1 of a module that does not exist searches the whole code path
  # (measured ~300 us per call), so a miss is remembered. A module loaded later by any means is
  # still picked up, since :erlang.module_loaded/1 is checked first.
  @moduledoc false

  @spec available?(module()) :: boolean()
  def available?(module) do
    :erlang.module_loaded(module) or
      (:persistent_term.get({__MODULE__, module}, :unknown) == :unknown and load(module))
  end

  defp load(module) do
    loaded = Code.ensure_loaded?(module)
    if !loaded, do: :persistent_term.put({__MODULE__, module}, :missing)
    loaded
  end
end
