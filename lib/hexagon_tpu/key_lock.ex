defmodule HexagonTpu.KeyLock do
  @moduledoc false
  # A per-key mutual exclusion on this node, FIFO and without polling: what Runtime.shared/1
  # needs so that, of many concurrent first callers, one opens the runtime and the others wait
  # exactly as long as that takes. (:global.trans/3, used before, makes a caller that finds the
  # lock taken sleep a random 0.25-8 s between retries: seconds of stall at boot for a runtime
  # that opens in milliseconds.)
  #
  # The server is started on first use, unlinked, and lives for the VM: the package has no
  # application callback to start it from. A holder that dies releases its locks (monitor);
  # a caller that dies while queued is dropped from the queue.

  use GenServer

  @doc "Runs `fun` holding the lock on `key`; returns what `fun` returns."
  @spec run(term(), (() -> result)) :: result when result: term()
  def run(key, fun) when is_function(fun, 0) do
    server = acquire(key, 2)

    try do
      fun.()
    after
      GenServer.cast(server, {:release, key, self()})
    end
  end

  # A server found just as it stopped (someone killed it) is replaced: one more try.
  defp acquire(key, tries) do
    server = server()

    try do
      :ok = GenServer.call(server, {:acquire, key}, :infinity)
      server
    catch
      :exit, {:noproc, _} when tries > 1 -> acquire(key, tries - 1)
    end
  end

  defp server do
    case GenServer.whereis(__MODULE__) do
      nil ->
        case GenServer.start(__MODULE__, nil, name: __MODULE__) do
          {:ok, pid} -> pid
          {:error, {:already_started, pid}} -> pid
        end

      pid ->
        pid
    end
  end

  # state: %{key => {holder_pid, holder_monitor, :queue.queue({from, pid, monitor})}}

  @impl true
  def init(nil), do: {:ok, %{}}

  @impl true
  def handle_call({:acquire, key}, {pid, _} = from, state) do
    mref = Process.monitor(pid)

    case state do
      %{^key => {holder, hmref, queue}} ->
        {:noreply, Map.put(state, key, {holder, hmref, :queue.in({from, pid, mref}, queue)})}

      _ ->
        {:reply, :ok, Map.put(state, key, {pid, mref, :queue.new()})}
    end
  end

  @impl true
  def handle_cast({:release, key, pid}, state) do
    case state do
      %{^key => {^pid, hmref, queue}} ->
        Process.demonitor(hmref, [:flush])
        {:noreply, grant_next(state, key, queue)}

      _ ->
        {:noreply, state}
    end
  end

  @impl true
  def handle_info({:DOWN, mref, :process, _pid, _reason}, state) do
    state =
      Enum.reduce(state, state, fn {key, {holder, hmref, queue}}, acc ->
        if hmref == mref do
          grant_next(acc, key, queue)
        else
          Map.put(acc, key, {holder, hmref, :queue.filter(fn {_, _, m} -> m != mref end, queue)})
        end
      end)

    {:noreply, state}
  end

  def handle_info(_other, state), do: {:noreply, state}

  defp grant_next(state, key, queue) do
    case :queue.out(queue) do
      {{:value, {from, pid, mref}}, rest} ->
        GenServer.reply(from, :ok)
        Map.put(state, key, {pid, mref, rest})

      {:empty, _} ->
        Map.delete(state, key)
    end
  end
end
