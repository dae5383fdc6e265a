defmodule HexagonTpu.Application do
  @moduledoc false
  # The package's one long-lived process: the lock that serializes opening shared runtimes
  # (HexagonTpu.KeyLock). Everything else lives in the caller's processes and the NIF.

  use Application

  @impl true
  def start(_type, _args) do
    Supervisor.start_link([HexagonTpu.KeyLock],
      strategy: :one_for_one,
      name: HexagonTpu.Supervisor
    )
  end
end
