defmodule HexagonTpu.ServingOrder do
  @moduledoc false
  # Requests that reach an Nx.Serving process in a known order, whatever the machine's load:
  # the serving is held (:sys.suspend/1) while each call is started and its request reaches the
  # serving's mailbox, then released, so it batches them as if they had arrived back to back.

  import ExUnit.Assertions

  @doc "Runs `calls` (0-arity functions that each send one request to `name`), in order."
  def in_order(name, calls) do
    pid = Process.whereis(name) || flunk("no serving named #{inspect(name)}")
    :ok = :sys.suspend(pid)
    # counted once suspended: before, the serving could still take a message (one it sent
    # itself as it started, say), and the count would wait for one request too many
    {:message_queue_len, before} = Process.info(pid, :message_queue_len)

    tasks =
      try do
        for {call, i} <- Enum.with_index(calls, 1) do
          task = Task.async(call)
          wait_queue(pid, before + i)
          task
        end
      after
        :ok = :sys.resume(pid)
      end

    Enum.map(tasks, &Task.await(&1, 30_000))
  end

  defp wait_queue(pid, n) do
    assert HexagonTpu.TestModels.wait_until(
             fn -> elem(Process.info(pid, :message_queue_len), 1) >= n end,
             10_000
           ),
           "the request did not reach the serving"
  end
end
