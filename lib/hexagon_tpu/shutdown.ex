defmodule HexagonTpu.Shutdown do
  @moduledoc false
  # Closing what is left open when the VM stops (HexagonTpu.close_all/0).
  #
  # Garbage collection frees what a program drops, but the VM collects nothing on its way out:
  # a script that leaves its model to GC, or a process still holding one when the node stops,
  # would reach the OS process exit with QNN handles open and the QNN libraries' exit-time
  # destructors running on them (the reference backend reports them on stderr). So the package
  # closes what is left itself, at the two points where a VM stops in order:
  #
  #   * the end of an `elixir`/`mix run` script or `mix test` (System.at_exit/1, registered
  #     when the first runtime opens);
  #   * the stop of the :hexagon_tpu application (prep_stop/1), which System.stop/0 and a
  #     release's shutdown reach after the applications that depend on it are stopped.
  #
  # The second needs the application running, and a script that only put the code on the path
  # (`elixir -pa`) never starts it: System.stop/0 runs no System.at_exit/1 function either, so
  # nothing closed before init killed every process and halted. What was still referenced then
  # (a model kept in :persistent_term, the resources of calls whose abort had not ended yet)
  # reached the exit open. So the first runtime's open starts the application too.
  #
  # An abrupt System.halt/1 skips both; the OS then reclaims what is open.

  alias HexagonTpu.{Error, NIF}

  # Both bounded: a QNN free stuck on a wedged DSP must not keep the VM from stopping.
  @gc_timeout_ms 2_000
  @close_timeout_ms 5_000
  @at_exit_key {__MODULE__, :at_exit}

  @spec close_all() :: :ok | {:error, Error.t()}
  def close_all do
    collect_garbage(@gc_timeout_ms)

    case NIF.close_all(@close_timeout_ms) do
      {:ok, _taken} ->
        :ok

      {:timeout, _taken} ->
        {:error,
         Error.new(
           :busy,
           "closing the handles left open did not finish within #{@close_timeout_ms} ms " <>
             "(a QNN free may be stuck on the DSP); the rest continues in the background"
         )}
    end
  end

  @doc false
  # Once per VM (a second registration would only find nothing left to close): the at-exit
  # function, and the application where nothing started it (see above).
  @spec arrange_at_exit() :: :ok
  def arrange_at_exit do
    unless :persistent_term.get(@at_exit_key, false) do
      :persistent_term.put(@at_exit_key, true)
      System.at_exit(fn _status -> on_stop() end)
      ensure_application()
    end

    :ok
  end

  # Already running (a Mix project, a release): nothing to do. A start that fails leaves the
  # at-exit function, and the open that got here has succeeded: a warning, not an error. An
  # exit: the application controller is gone, the VM is stopping already.
  defp ensure_application do
    case Application.ensure_all_started(:hexagon_tpu) do
      {:ok, _started} ->
        :ok

      {:error, reason} ->
        :logger.warning(
          "hexagon_tpu: the :hexagon_tpu application did not start (#{inspect(reason)}): " <>
            "System.stop/0 will not close the handles left open; call " <>
            "HexagonTpu.close_all/0 before stopping"
        )
    end
  catch
    :exit, _reason -> :ok
  end

  @doc false
  # Never raises: the VM is stopping either way.
  @spec on_stop() :: :ok
  def on_stop do
    case close_all() do
      :ok -> :ok
      {:error, %Error{message: message}} -> :logger.warning("hexagon_tpu: " <> message)
    end

    :ok
  catch
    _kind, _reason -> :ok
  end

  # Every process's unreachable terms, so that what the program dropped is freed by its own
  # destructor (and a zero-copy output binary no longer holds its buffer). Asynchronous requests
  # from a helper process: a process inside a long dirty NIF call answers only when the call
  # returns, and replies after the deadline die with the helper, not in the caller's mailbox.
  defp collect_garbage(timeout_ms) do
    :erlang.garbage_collect()
    caller = self()

    {pid, mref} =
      spawn_monitor(fn ->
        ref = make_ref()
        pids = Process.list() -- [self(), caller]
        Enum.each(pids, &:erlang.garbage_collect(&1, async: ref))
        await_gc(ref, length(pids), System.monotonic_time(:millisecond) + timeout_ms)
      end)

    receive do
      {:DOWN, ^mref, :process, ^pid, _reason} -> :ok
    after
      timeout_ms + 1_000 ->
        Process.exit(pid, :kill)

        receive do
          {:DOWN, ^mref, :process, ^pid, _reason} -> :ok
        end
    end
  end

  defp await_gc(_ref, 0, _deadline), do: :ok

  defp await_gc(ref, left, deadline) do
    wait = max(deadline - System.monotonic_time(:millisecond), 0)

    receive do
      {:garbage_collect, ^ref, _result} -> await_gc(ref, left - 1, deadline)
    after
      wait -> :ok
    end
  end
end
