defmodule HexagonTpu.Application do
  @moduledoc false
  # The package's long-lived processes: the lock that serializes opening shared runtimes
  # (HexagonTpu.KeyLock) and the owner of what the figures remember since the start
  # (HexagonTpu.Ledger: the start itself, loads, first answers). Everything else lives in the
  # caller's processes and the NIF. Stopping the application closes every handle still open
  # (HexagonTpu.Shutdown).

  use Application

  @impl true
  def start(_type, _args) do
    # the start of "boot to first answer" (HexagonTpu.Stats.boot/0): as early as can be
    started = System.monotonic_time()

    # Nx and :telemetry are optional applications, not Hex deps with version requirements: a
    # version hexagon_tpu does not support stops the start here, naming both versions.
    # The NIF's first load happens here at the latest (HexagonTpu.NIF): a missing or broken
    # library stops the start with its path and reason, not a later call.
    with :ok <- HexagonTpu.Optional.check_versions(),
         :ok <- HexagonTpu.NIF.status() do
      Supervisor.start_link([{HexagonTpu.Ledger, started}, HexagonTpu.KeyLock],
        strategy: :one_for_one,
        name: HexagonTpu.Supervisor
      )
    end
  end

  # System.stop/0 and a release's shutdown stop this application after those that depend on
  # it: close what their processes (and any other) left open before the VM exits.
  @impl true
  def prep_stop(state) do
    HexagonTpu.Shutdown.on_stop()
    state
  end
end
