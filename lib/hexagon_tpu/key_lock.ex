defmodule HexagonTpu.KeyLock do
  @moduledoc false
  # A per-key mutual exclusion on this node, FIFO and without polling: what Runtime.shared/1
  # needs so that, of many concurrent first callers, one opens the runtime and the others wait
  # exactly as long as that takes. (:global.trans/3, used before, makes a caller that finds the
  # lock taken sleep a random 0.25-8 s between retries: seconds of stall at boot for a runtime
  # that opens in milliseconds.)
  #
  # The server runs under the package's application (HexagonTpu.Application). Where the
  # application is not started (a script that only put the code on the path), the first caller
  # starts it, unlinked and with init's group leader, so it does not die with the caller's own
  # application. A holder that dies releases its locks (monitor); a caller that dies while
  # queued leaves the queue. Should the server itself die, its holders lose the lock and its
  # waiters ask the next server: at worst two runtimes get opened for one option set, one of
  # which then simply is not the shared one.
  #
  # The server also owns the values the locks guard (Runtime.shared/1's runtimes): a public
  # ETS table, read without the lock and written under it. ETS and not :persistent_term: a
  # lookup copies the value into the reader's heap, so every reader holds its own reference to
  # the resources in it. A :persistent_term value is one literal that readers only point at;
  # on OTP 25 a runtime handed out that way, passed on in a message and erased meanwhile
  # (close_shared/0) could be garbage-collected while still referenced, and a NIF then read the
  # freed resource (a segmentation fault). The values go with the server: a new server starts
  # with none (the next Runtime.shared/1 opens a fresh runtime).

  use GenServer

  @values __MODULE__.Values

  @doc "The value stored for `key`, or `nil`: a copy in the caller's heap. Takes no lock."
  @spec get(term()) :: term()
  def get(key) do
    case :ets.lookup(@values, key) do
      [{^key, value}] -> value
      [] -> nil
    end
  rescue
    # no server (yet, or any more): nothing stored
    ArgumentError -> nil
  end

  @doc "Stores `value` for `key`. Call it holding the lock on `key` (`run/2`)."
  @spec put(term(), term()) :: :ok
  def put(key, value) do
    :ets.insert(@values, {key, value})
    :ok
  rescue
    # the server died under the holder: the value is simply not kept
    ArgumentError -> :ok
  end

  @doc "Forgets the value of `key`. Call it holding the lock on `key` (`run/2`)."
  @spec delete(term()) :: :ok
  def delete(key) do
    :ets.delete(@values, key)
    :ok
  rescue
    ArgumentError -> :ok
  end

  @doc "The keys that have a value and match `pattern` (an ETS match pattern, e.g. `{:a, :_}`)."
  @spec keys(term()) :: [term()]
  def keys(pattern) do
    :ets.select(@values, [{{pattern, :_}, [], [{:element, 1, :"$_"}]}])
  rescue
    ArgumentError -> []
  end

  @doc "Runs `fun` holding the lock on `key`; returns what `fun` returns. Not re-entrant."
  @spec run(term(), (() -> result)) :: result when result: term()
  def run(key, fun) when is_function(fun, 0) do
    server = acquire(key, 3)

    try do
      fun.()
    after
      GenServer.cast(server, {:release, key, self()})
    end
  end

  @doc false
  # For the application's supervisor. A server a script started before the application is
  # adopted rather than refused (a refusal would count as a failed start of the child).
  def start_link(_opts) do
    case GenServer.start_link(__MODULE__, :supervised, name: __MODULE__) do
      {:error, {:already_started, pid}} ->
        Process.link(pid)
        {:ok, pid}

      other ->
        other
    end
  end

  defp acquire(key, tries) do
    server = server()

    case GenServer.call(server, {:acquire, key}, :infinity) do
      :ok ->
        server

      :already_held ->
        raise RuntimeError,
              "HexagonTpu.KeyLock: this process already holds the lock on #{inspect(key)} " <>
                "(the lock is not re-entrant)"
    end
  catch
    # The server died (killed, or its application stopped) before granting: ask the next one.
    :exit, {_reason, {GenServer, :call, _}} when tries > 1 ->
      acquire(key, tries - 1)
  end

  defp server do
    case GenServer.whereis(__MODULE__) do
      nil ->
        case GenServer.start(__MODULE__, :lazy, name: __MODULE__) do
          {:ok, pid} -> pid
          {:error, {:already_started, pid}} -> pid
        end

      pid ->
        pid
    end
  end

  # state: %{key => {holder_pid, holder_monitor, :queue.queue({from, pid, monitor})}}

  @impl true
  def init(:supervised), do: {:ok, new_values()}

  def init(:lazy) do
    # Not the first caller's group leader: an application master kills the processes whose
    # group leader it is when that application stops.
    {:group_leader, gl} = Process.info(Process.whereis(:init), :group_leader)
    Process.group_leader(self(), gl)
    {:ok, new_values()}
  end

  # The state stays the lock map: the table is reached by its name.
  defp new_values do
    :ets.new(@values, [:named_table, :public, :set, read_concurrency: true])
    %{}
  end

  @impl true
  def handle_call({:acquire, key}, {pid, _} = from, state) do
    mref = Process.monitor(pid)

    case state do
      %{^key => {^pid, _hmref, _queue}} ->
        Process.demonitor(mref, [:flush])
        {:reply, :already_held, state}

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
