# Optional-dependency tests run only when the dependency is loadable; say why when they don't.
optional = [
  nx: {Nx, "Nx is not loadable (add {:nx, \"~> 0.7\"} to a project that uses hexagon_tpu)"},
  telemetry: {:telemetry, ":telemetry is not loadable"}
]

exclude =
  for {tag, {module, why}} <- optional, not Code.ensure_loaded?(module) do
    IO.puts("Excluding tests tagged #{inspect(tag)}: #{why}")
    tag
  end

ExUnit.start(exclude: exclude)

# Leave nothing open for the reference backend's at-unload leak report: forget the shared
# runtimes, then let GC and the reaper close what the tests dropped.
ExUnit.after_suite(fn _ ->
  HexagonTpu.Runtime.close_shared()
  HexagonTpu.TestModels.wait_for_live(%{live_runtimes: 0, live_contexts: 0, live_graphs: 0})
end)
