# Compiled only where Nx is loadable (`make test` runs without it), so no code here calls a
# missing Nx: `make test-elixir-optional` runs these tests.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.ServingQueueTest do
    # [:hexagon_tpu, :serving, :queue]: the rows a serving holds, exact. The serving process is
    # suspended while the requests arrive, so every figure is known in advance: the requests
    # queue one by one in the callers, then, resumed, the serving fills batches of 4 rows from
    # its mailbox and hands them to its one partition as it frees.
    use ExUnit.Case, async: false

    @moduletag :nx
    @moduletag :telemetry
    @moduletag skip:
                 HexagonTpu.TestModels.optional_skip(:nx) ||
                   HexagonTpu.TestModels.optional_skip(:telemetry)
    @compile {:no_warn_undefined, [:telemetry]}

    import HexagonTpu.TestModels

    # A graph name of its own: the events of other servings never reach this test's handler.
    @model """
    graph queue_probe
      input a f32 [1,4]
      input b f32 [1,4]
      output y f32 [1,4]
      op ElementWiseAdd a b -> y
    """

    def send_event(_event, measurements, %{graph: "queue_probe"} = meta, parent),
      do: send(parent, {:queue, meta.change, measurements, meta.partition})

    def send_event(_event, _measurements, _meta, _parent), do: :ok

    setup do
      id = "serving-queue-#{System.unique_integer([:positive])}"
      handler = &__MODULE__.send_event/4
      :ok = :telemetry.attach(id, [:hexagon_tpu, :serving, :queue], handler, self())
      on_exit(fn -> :telemetry.detach(id) end)

      path = build_file!(@model)
      # Only full batches run: the timeout never fires during a test.
      opts = [backend: :reference, batch_size: 4, batch_timeout: 60_000]
      name = :"serving_queue_#{System.unique_integer([:positive])}"
      start_supervised!({Nx.Serving, serving: HexagonTpu.Serving.new(path, opts), name: name})
      assert_receive {:queue, :reset, %{queue_length: 0, running: 0, rows: 0}, nil}
      %{name: name}
    end

    test "requests queue in rows; each batch moves 4 rows from the queue to running", %{
      name: name
    } do
      pid = Process.whereis(name)
      :ok = :sys.suspend(pid)

      # 12 rows in 6 requests, sent one after the other: each caller's event carries the sum so
      # far. (Nx.Serving splits the 3-row requests that cross a batch boundary.)
      rows = [1, 2, 3, 2, 1, 3]

      tasks =
        for {n, total} <- Enum.zip(rows, Enum.scan(rows, &+/2)) do
          task = Task.async(fn -> Nx.Serving.batched_run(name, [row(n, n), row(n, 1)]) end)
          assert_receive {:queue, :request, %{queue_length: ^total, running: 0, rows: ^n}, nil}
          task
        end

      # Every request is in the suspended serving's mailbox before it runs anything.
      assert wait_until(fn -> Process.info(pid, :message_queue_len) == {:message_queue_len, 6} end)

      :ok = :sys.resume(pid)

      for {n, [y]} <- Enum.zip(rows, Task.await_many(tasks)) do
        assert Nx.to_flat_list(y) == List.duplicate(n + 1.0, 4 * n)
      end

      # Handed over in order by the serving process (one partition: the next batch only after
      # the previous one finished), finished in their tasks.
      batches = for _ <- 1..3, do: receive_change(:batch)
      assert batches == [{8, 4, 4, 0}, {4, 4, 4, 0}, {0, 4, 4, 0}]
      done = for _ <- 1..3, do: receive_change(:done)
      assert Enum.sort(done, :desc) == [{8, 0, 4, 0}, {4, 0, 4, 0}, {0, 0, 4, 0}]
      refute_received {:queue, _, _, _}
    end

    test "a serving that restarts starts its count again from zero", %{name: name} do
      pid = Process.whereis(name)
      :ok = :sys.suspend(pid)

      # Two requests (3 rows) wait in the serving when it is killed: their callers get the exit.
      tasks =
        for {n, total} <- [{2, 2}, {1, 3}] do
          task =
            Task.async(fn ->
              exit_of(fn -> Nx.Serving.batched_run(name, [row(n, 1), row(n, 1)]) end)
            end)

          assert_receive {:queue, :request, %{queue_length: ^total}, nil}
          task
        end

      assert wait_until(fn -> Process.info(pid, :message_queue_len) == {:message_queue_len, 2} end)

      Process.exit(pid, :kill)
      assert [{:exit, _}, {:exit, _}] = Task.await_many(tasks)

      # The restarted serving says so, and its queue starts from nothing.
      assert_receive {:queue, :reset, %{queue_length: 0, running: 0, rows: 0}, nil}
      assert wait_until(fn -> Process.whereis(name) not in [nil, pid] end)
      task = Task.async(fn -> Nx.Serving.batched_run(name, [row(4, 1), row(4, 1)]) end)
      assert_receive {:queue, :request, %{queue_length: 4, running: 0, rows: 4}, nil}
      assert [_] = Task.await(task)
      assert receive_change(:batch) == {0, 4, 4, 0}
      assert receive_change(:done) == {0, 0, 4, 0}
    end

    test "an inline run (Nx.Serving.run/2) queues and runs its rows in the caller" do
      serving = HexagonTpu.Serving.new(build_file!(@model), backend: :reference, batch_size: 4)
      assert [_] = Nx.Serving.run(serving, [row(3, 1), row(3, 1)])
      assert_received {:queue, :request, %{queue_length: 3, running: 0, rows: 3}, nil}
      assert_received {:queue, :batch, %{queue_length: 0, running: 3, rows: 3}, 0}
      assert_received {:queue, :done, %{queue_length: 0, running: 0, rows: 3}, 0}
      # No serving process started: nothing was reset.
      refute_received {:queue, :reset, _, _}
    end

    defp row(rows, value), do: Nx.broadcast(Nx.tensor(value * 1.0, type: :f32), {rows, 4})

    defp receive_change(change) do
      assert_receive {:queue, ^change, m, partition}
      {m.queue_length, m.running, m.rows, partition}
    end

    defp exit_of(fun) do
      fun.()
    catch
      :exit, reason -> {:exit, reason}
    end
  end
end
