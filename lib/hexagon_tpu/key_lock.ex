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
  #
  # Rows: {key, value, used_ms} (used_ms: System.monotonic_time(:millisecond) of the put or the
  # last touch/1), and {{:pin, key, pid}, count} while a process uses the value of `key` without
  # the lock (pin/1 .. unpin/1; each row is written by its own process only, so no update
  # races). While values are stored, the server runs HexagonTpu.Runtime.Retirement.close_idle/1
  # every Retirement.interval_ms/0, in a process of its own (linked: it goes with the
  # server), which takes the locks like any other caller.

  use GenServer

  @values __MODULE__.Values

  @doc "The value stored for `key`, or `nil`: a copy in the caller's heap. Takes no lock."
  @spec get(term()) :: term()
  def get(key) do
    case entry(key) do
      {value, _used} -> value
      nil -> nil
    end
  end

  @doc "`{value, used_ms}` for `key`, or `nil`. Takes no lock."
  @spec entry(term()) :: {term(), integer()} | nil
  def entry(key) do
    case :ets.lookup(@values, key) do
      [{^key, value, used}] -> {value, used}
      _ -> nil
    end
  rescue
    # no server (yet, or any more): nothing stored
    ArgumentError -> nil
  end

  @doc """
  Stores `value` for `key`, used now (or at `used`, when a value is put back). Call it holding
  the lock on `key` (`run/2`).
  """
  @spec put(term(), term(), integer() | nil) :: :ok
  def put(key, value, used \\ nil) do
    :ets.insert(@values, {key, value, used || now()})
    arm()
  rescue
    # the server died under the holder: the value is simply not kept
    ArgumentError -> :ok
  end

  @doc """
  Marks the value of `key` (if any) used now, and makes sure a sweep is scheduled (so a period
  set since the value was stored applies from the next use). Takes no lock.
  """
  @spec touch(term()) :: :ok
  def touch(key) do
    if :ets.update_element(@values, key, {3, now()}), do: arm(), else: :ok
  rescue
    ArgumentError -> :ok
  end

  @doc """
  The calling process is using the value of `key` without the lock (pins nest). Pin before
  looking the value up: a holder that takes the value away (`delete/1`) and then finds no pin
  (`pinned?/1`) knows no pinning process can have seen it.
  """
  @spec pin(term()) :: :ok
  def pin(key) do
    row = {:pin, key, self()}
    :ets.update_counter(@values, row, 1, {row, 0})
    :ok
  rescue
    ArgumentError -> :ok
  end

  @doc "Undoes one `pin/1` of the calling process."
  @spec unpin(term()) :: :ok
  def unpin(key) do
    row = {:pin, key, self()}
    # never below 0, also when the table was replaced (a new server) since the pin
    if :ets.update_counter(@values, row, {2, -1, 0, 0}, {row, 1}) == 0,
      do: :ets.delete(@values, row)

    :ok
  rescue
    ArgumentError -> :ok
  end

  @doc "Whether a live process has `key` pinned (rows of dead processes are dropped)."
  @spec pinned?(term()) :: boolean()
  def pinned?(key) do
    pids = :ets.select(@values, [{{{:pin, key, :"$1"}, :"$2"}, [{:>, :"$2", 0}], [:"$1"]}])
    {alive, dead} = Enum.split_with(pids, &Process.alive?/1)
    Enum.each(dead, &:ets.delete(@values, {:pin, key, &1}))
    alive != []
  rescue
    ArgumentError -> false
  end

  @doc "Drops the pins of processes that died pinned (killed in the middle of a load)."
  @spec drop_dead_pins() :: :ok
  def drop_dead_pins do
    for {:pin, _key, pid} = row <- :ets.select(@values, [{{:"$1", :_}, [], [:"$1"]}]),
        not Process.alive?(pid),
        do: :ets.delete(@values, row)

    :ok
  rescue
    ArgumentError -> :ok
  end

  defp now, do: System.monotonic_time(:millisecond)

  # A value was stored: make sure a sweep is scheduled.
  defp arm do
    case GenServer.whereis(__MODULE__) do
      nil -> :ok
      pid -> GenServer.cast(pid, :arm)
    end
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
    :ets.select(@values, [{{pattern, :_, :_}, [], [{:element, 1, :"$_"}]}])
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

  # state: %{locks: %{key => {holder_pid, holder_monitor, :queue.queue({from, pid, monitor})}},
  #          sweep: nil | {:timer, timer_ref} | {:running, pid, monitor}}

  @impl true
  def init(:supervised), do: {:ok, new_values()}

  def init(:lazy) do
    # Not the first caller's group leader: an application master kills the processes whose
    # group leader it is when that application stops.
    {:group_leader, gl} = Process.info(Process.whereis(:init), :group_leader)
    Process.group_leader(self(), gl)
    {:ok, new_values()}
  end

  # The table is reached by its name.
  defp new_values do
    :ets.new(@values, [:named_table, :public, :set, read_concurrency: true])
    %{locks: %{}, sweep: nil}
  end

  @impl true
  def handle_call({:acquire, key}, {pid, _} = from, %{locks: locks} = state) do
    mref = Process.monitor(pid)

    case locks do
      %{^key => {^pid, _hmref, _queue}} ->
        Process.demonitor(mref, [:flush])
        {:reply, :already_held, state}

      %{^key => {holder, hmref, queue}} ->
        locks = Map.put(locks, key, {holder, hmref, :queue.in({from, pid, mref}, queue)})
        {:noreply, %{state | locks: locks}}

      _ ->
        {:reply, :ok, %{state | locks: Map.put(locks, key, {pid, mref, :queue.new()})}}
    end
  end

  @impl true
  def handle_cast({:release, key, pid}, %{locks: locks} = state) do
    case locks do
      %{^key => {^pid, hmref, queue}} ->
        Process.demonitor(hmref, [:flush])
        {:noreply, %{state | locks: grant_next(locks, key, queue)}}

      _ ->
        {:noreply, state}
    end
  end

  def handle_cast(:arm, %{sweep: nil} = state), do: {:noreply, schedule_sweep(state)}
  def handle_cast(:arm, state), do: {:noreply, state}

  @impl true
  def handle_info({:DOWN, mref, :process, _pid, _reason}, %{sweep: {:running, _, mref}} = state) do
    # The sweep is done: another one while values are left to look after.
    state = %{state | sweep: nil}
    {:noreply, if(values_left?(), do: schedule_sweep(state), else: state)}
  end

  def handle_info({:DOWN, mref, :process, _pid, _reason}, %{locks: locks} = state) do
    locks =
      Enum.reduce(locks, locks, fn {key, {holder, hmref, queue}}, acc ->
        if hmref == mref do
          grant_next(acc, key, queue)
        else
          Map.put(acc, key, {holder, hmref, :queue.filter(fn {_, _, m} -> m != mref end, queue)})
        end
      end)

    {:noreply, %{state | locks: locks}}
  end

  def handle_info(:sweep, %{sweep: {:timer, _}} = state), do: {:noreply, start_sweep(state)}

  def handle_info(_other, state), do: {:noreply, state}

  defp schedule_sweep(state) do
    case HexagonTpu.Runtime.Retirement.interval_ms() do
      nil -> state
      ms -> %{state | sweep: {:timer, Process.send_after(self(), :sweep, ms)}}
    end
  end

  # Linked, so a sweep goes with the server; it catches everything, so it never takes the
  # server down (a normal exit of a linked process is ignored).
  defp start_sweep(state) do
    pid =
      spawn_link(fn ->
        try do
          HexagonTpu.Runtime.Retirement.close_idle([])
        catch
          kind, reason ->
            :logger.warning(
              "hexagon_tpu: retiring idle shared runtimes failed: " <>
                Exception.format(kind, reason, __STACKTRACE__),
              %{mfa: {__MODULE__, :start_sweep, 1}}
            )
        end
      end)

    %{state | sweep: {:running, pid, Process.monitor(pid)}}
  end

  defp values_left?, do: :ets.select_count(@values, [{{:_, :_, :_}, [], [true]}]) > 0

  defp grant_next(locks, key, queue) do
    case :queue.out(queue) do
      {{:value, {from, pid, mref}}, rest} ->
        GenServer.reply(from, :ok)
        Map.put(locks, key, {pid, mref, rest})

      {:empty, _} ->
        Map.delete(locks, key)
    end
  end
end
