defmodule HexagonTpu.Runtime.Retirement do
  # Runtime.close_idle_shared/1: the shared runtimes (Runtime.Shared) that nothing has used for
  # the idle period are closed. HexagonTpu.KeyLock's server runs it every interval_ms/0 while
  # shared runtimes are stored, in a process of its own that takes the locks like any caller.
  @moduledoc false

  alias HexagonTpu.{Error, KeyLock, NIF, Options}
  alias HexagonTpu.Runtime.Shared

  @spec close_idle(term()) :: {:ok, non_neg_integer()} | {:error, Error.t()}
  def close_idle(opts) do
    where = "HexagonTpu.Runtime.close_idle_shared/1"

    with {:ok, default} <- Shared.idle_ms(),
         {:ok, o} <-
           Options.validate(
             opts,
             %{idle_ms: {&Shared.valid_idle_ms?/1, Shared.idle_expected(), default}},
             where
           ) do
      KeyLock.drop_dead_pins()

      closed =
        if o.idle_ms == :infinity,
          do: 0,
          else: Shared.keys() |> Enum.map(&retire_if_idle(&1, o.idle_ms)) |> Enum.sum()

      {:ok, closed}
    end
  end

  # The KeyLock server's period between sweeps; nil: none (:infinity, or a bad setting, which
  # close_idle/1 reports).
  @spec interval_ms() :: pos_integer() | nil
  def interval_ms do
    case Shared.idle_ms() do
      {:ok, :infinity} -> nil
      {:ok, ms} -> ms |> div(2) |> max(1_000) |> min(60_000)
      {:error, _} -> nil
    end
  end

  # Under the option set's lock, the runtime is first taken out of the table: a lookup from then
  # on misses and queues on this lock, so a caller that has not pinned the key by the time the
  # pins are read cannot hold this runtime. Put back (with its last use) unless idle.
  defp retire_if_idle(key, idle_ms) do
    Shared.with_lock(key, fn ->
      case KeyLock.entry(key) do
        {rt, used} ->
          KeyLock.delete(key)

          case usage(key, rt, used, idle_ms) do
            :idle ->
              Shared.close(rt)
              1

            :closed ->
              0

            :in_use ->
              KeyLock.put(key, rt, used)
              0
          end

        nil ->
          0
      end
    end)
  end

  defp usage(key, rt, used, idle_ms) do
    cond do
      KeyLock.pinned?(key) -> :in_use
      System.monotonic_time(:millisecond) - used < idle_ms -> :in_use
      true -> native_usage(rt, idle_ms)
    end
  end

  defp native_usage(rt, idle_ms) do
    case NIF.runtime_usage(rt.ref) do
      {:ok, 0, idle} when idle >= idle_ms -> :idle
      {:ok, _users, _idle} -> :in_use
      # closed by close/1, or made by a purged copy of the library: forgotten, as shared/1 would
      {:error, _} -> :closed
    end
  end
end
