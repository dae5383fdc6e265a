# Optional-dependency tests (tagged :nx and :telemetry) run only when the dependency is
# present, and then hexagon_tpu has started it (its optional applications). Otherwise the
# modules that call Nx are not compiled at all (`if Code.ensure_loaded?(Nx)`: no warning about
# a missing Nx), and the others tag their tests skip: <reason>. With HTPU_REQUIRE_OPTIONAL=1
# (test/optional/run.sh, where the real libraries are on ERL_LIBS) a missing one fails the run
# before any test, so the real path can never silently stop running.
require_optional = System.get_env("HTPU_REQUIRE_OPTIONAL") in ["1", "true"]

for app <- [:nx, :telemetry], reason = HexagonTpu.TestModels.optional_skip(app) do
  if require_optional,
    do: raise("HTPU_REQUIRE_OPTIONAL=1: #{reason}; the tests that need it would be skipped"),
    else: IO.puts("#{reason}: the tests that need it do not run")
end

# The suite runs on shared, sometimes heavily loaded machines where every dirty NIF call can
# wait milliseconds for a thread: messages get 5 s (not 100 ms) to arrive, and the tests that
# run thousands of cycles to prove counters return to zero get 5 minutes (not 60 s). Neither
# slows a passing run.
# Tests against a real QAIRT SDK's x86-64 host libraries (tag :qnn_host) are excluded unless
# asked for (`mix test --include qnn_host`, with QNN_HOST_LIB_DIR or QNN_SDK_ROOT naming the
# libraries: docs/reliability.md, "The host path"). The line below says so and how many, so the
# runs that allow no exclusion (test/optional/summary.sh) can tell these from a lost test.
qnn_host_tests =
  Path.wildcard(Path.join(__DIR__, "**/*_test.exs"))
  |> Enum.filter(&(File.read!(&1) =~ "@moduletag :qnn_host"))
  |> Enum.map(&length(Regex.scan(~r/^\s*test "/m, File.read!(&1))))
  |> Enum.sum()

IO.puts(
  "htpu-excluded: qnn_host: #{qnn_host_tests} tests: they run the real QAIRT host libraries; " <>
    "mix test --include qnn_host with QNN_HOST_LIB_DIR (or QNN_SDK_ROOT) set runs them"
)

ExUnit.start(assert_receive_timeout: 5_000, timeout: 300_000, exclude: [:qnn_host])

# Shared runtimes stay open until close_shared/0 here, as the tests' live-handle baselines
# assume: a runtime retired by the timer in the middle of another test would move its counts.
# The retirement has its own tests (shared_runtime_test.exs), which set the period themselves.
Application.put_env(:hexagon_tpu, :shared_runtime_idle_ms, :infinity)

# The board's files (HexagonTpu.Stats.board/1, the Monitor's board readings) are read under an
# empty stand-in for /, never this machine's /sys; the tests that need a board build one and
# pass its root.
board_root = Path.join(HexagonTpu.TestModels.tmp_dir!(), "empty_board_root")
File.mkdir_p!(board_root)
Application.put_env(:hexagon_tpu, :board_root, board_root)

# The package needs only Erlang's :logger (kernel); Elixir's Logger application, which
# capture_log and @tag :capture_log need, is started here for every test file, so none depends
# on another module having started it first.
{:ok, _} = Application.ensure_all_started(:logger)

# Leave nothing open for the reference backend's at-unload leak report: forget the shared
# runtimes, then let GC and the reaper close what the tests dropped.
ExUnit.after_suite(fn _ ->
  HexagonTpu.Runtime.close_shared()

  HexagonTpu.TestModels.wait_for_live(%{
    live_runtimes: 0,
    live_contexts: 0,
    live_graphs: 0,
    live_shared_buffers: 0
  })
end)
