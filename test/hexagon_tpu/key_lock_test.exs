defmodule HexagonTpu.KeyLockTest do
  # The lock behind Runtime.shared/1: one holder per key, waiters in arrival order, and a
  # holder or waiter that dies never wedges the key. Not async: one test kills the server that
  # Runtime.shared/1 in other modules' tests relies on.
  use ExUnit.Case, async: false

  # killing the server makes the supervisor report it
  @moduletag :capture_log

  alias HexagonTpu.KeyLock

  defp key, do: {__MODULE__, make_ref()}

  # Starts a process that takes the lock on `k`, reports {:holding, tag}, and keeps it until
  # told :release (or killed). Returns once it is queued or holding (`wait_queued` says which
  # count of waiters to wait for, so arrival order is deterministic).
  defp locker(k, tag) do
    test = self()

    spawn(fn ->
      KeyLock.run(k, fn ->
        send(test, {:holding, tag, self()})

        receive do
          :release -> :ok
        end
      end)

      send(test, {:released, tag})
    end)
  end

  # :a holds the lock on k; :b, then :c, wait for it (in that order).
  defp holder_and_two_waiters(k) do
    a = locker(k, :a)
    assert_receive {:holding, :a, ^a}
    b = locker(k, :b)
    wait_waiters(k, 1)
    c = locker(k, :c)
    wait_waiters(k, 2)
    {a, b, c}
  end

  defp waiters(k) do
    case :sys.get_state(KeyLock) do
      %{locks: %{^k => {_holder, _mref, queue}}} -> :queue.len(queue)
      _ -> 0
    end
  end

  defp wait_waiters(k, n) do
    assert HexagonTpu.TestModels.wait_until(fn -> waiters(k) == n end),
           "#{n} waiters on #{inspect(k)}"
  end

  test "returns the function's value, and the key is free again afterwards" do
    k = key()
    assert KeyLock.run(k, fn -> :value end) == :value
    assert KeyLock.run(k, fn -> :again end) == :again
  end

  test "one holder at a time; waiters get the lock in arrival order" do
    k = key()
    {a, b, c} = holder_and_two_waiters(k)
    refute_received {:holding, _, _}

    send(a, :release)
    assert_receive {:holding, :b, ^b}
    refute_received {:holding, :c, _}
    send(b, :release)
    assert_receive {:holding, :c, ^c}
    send(c, :release)
    assert_receive {:released, :c}
    assert KeyLock.run(k, fn -> :free end) == :free
  end

  test "different keys do not wait for each other" do
    a = locker(k1 = key(), :a)
    assert_receive {:holding, :a, ^a}
    assert KeyLock.run(key(), fn -> :other_key end) == :other_key
    send(a, :release)
    assert KeyLock.run(k1, fn -> :done end) == :done
  end

  test "a holder that dies releases the lock; a waiter that dies leaves the queue" do
    k = key()
    {a, b, c} = holder_and_two_waiters(k)

    Process.exit(b, :kill)
    wait_waiters(k, 1)
    Process.exit(a, :kill)
    assert_receive {:holding, :c, ^c}
    refute_received {:holding, :b, _}
    send(c, :release)
    assert_receive {:released, :c}
  end

  test "the server runs under the application; killed, it is replaced" do
    k = key()
    assert KeyLock.run(k, fn -> :before end) == :before
    pid = GenServer.whereis(KeyLock)

    assert {_, ^pid, :worker, _} =
             List.keyfind(Supervisor.which_children(HexagonTpu.Supervisor), KeyLock, 0)

    ref = Process.monitor(pid)
    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, _, _, _}
    assert KeyLock.run(k, fn -> :after end) == :after

    assert HexagonTpu.TestModels.wait_until(fn ->
             match?(
               {_, p, :worker, _} when is_pid(p) and p != pid,
               List.keyfind(Supervisor.which_children(HexagonTpu.Supervisor), KeyLock, 0)
             )
           end)
  end

  test "a waiter whose server dies asks the next server" do
    k = key()
    a = locker(k, :a)
    assert_receive {:holding, :a, ^a}
    b = locker(k, :b)
    wait_waiters(k, 1)
    server = GenServer.whereis(KeyLock)
    Process.exit(server, :kill)
    # the holder lost its lock with the server (documented): the waiter gets the key next
    assert_receive {:holding, :b, ^b}
    send(b, :release)
    assert_receive {:released, :b}
    send(a, :release)
    assert_receive {:released, :a}
  end

  test "taking a lock the process already holds raises instead of waiting for itself" do
    k = key()

    assert_raise RuntimeError, ~r/already holds the lock/, fn ->
      KeyLock.run(k, fn -> KeyLock.run(k, fn -> :never end) end)
    end

    assert KeyLock.run(k, fn -> :free end) == :free
  end

  test "a function that raises releases the lock, and the error reaches the caller" do
    k = key()
    assert_raise RuntimeError, "boom", fn -> KeyLock.run(k, fn -> raise "boom" end) end
    assert KeyLock.run(k, fn -> :free end) == :free
  end

  test "values: stored under the lock, read as copies, gone with the server" do
    k = key()
    assert KeyLock.get(k) == nil
    value = %{ref: make_ref(), name: "x"}
    KeyLock.run(k, fn -> KeyLock.put(k, value) end)
    assert KeyLock.get(k) == value
    # each read is its own copy, not one term every reader points at
    refute :erts_debug.same(KeyLock.get(k), KeyLock.get(k))
    assert k in KeyLock.keys(:_)

    pid = GenServer.whereis(KeyLock)
    ref = Process.monitor(pid)
    Process.exit(pid, :kill)
    assert_receive {:DOWN, ^ref, _, _, _}
    assert KeyLock.get(k) == nil

    KeyLock.run(k, fn -> KeyLock.delete(k) end)
    assert KeyLock.get(k) == nil
  end
end
