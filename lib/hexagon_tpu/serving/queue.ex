defmodule HexagonTpu.Serving.Queue do
  # The queue of a HexagonTpu.Serving, in rows (what batch_size counts), emitted as
  # [:hexagon_tpu, :serving, :queue] each time it changes (docs/serving.md, Telemetry):
  #  - queued: rows of requests that passed their caller's checks and are not yet in a batch
  #    that runs: in the serving's mailbox, in the batch being filled, or in full batches
  #    waiting for a free partition (what Nx.Serving holds, which it does not expose);
  #  - running: rows of batches handed to a partition and not finished: executing, or waiting
  #    for the graph (another caller's execute on the same model).
  # Counted where the rows change hands, not read from Nx.Serving's state: +rows in the caller
  # once its request is checked (Nx.Serving's client_preprocessing, the step before it sends
  # the request), -rows / +rows when Nx.Serving hands a batch to a partition (handle_batch/3,
  # in the serving process), -rows when the batch's execute returns (in its task). One
  # :atomics array per serving made by new/2; add_get makes each event's own figure exact
  # under concurrent callers (the other figure is read beside it).
  @moduledoc false

  alias HexagonTpu.Telemetry

  @queued 1
  @running 2

  @type t :: :atomics.atomics_ref()

  @spec new() :: t()
  def new, do: :atomics.new(2, signed: true)

  # A serving process starting (or restarting after a crash, whose queued requests went with
  # it): nothing is queued or running.
  @spec reset(t(), String.t()) :: :ok
  def reset(queue, graph) do
    :atomics.put(queue, @queued, 0)
    :atomics.put(queue, @running, 0)
    emit(graph, :reset, 0, nil, 0, 0)
  end

  @spec request(t(), String.t(), pos_integer()) :: :ok
  def request(queue, graph, rows) do
    queued = :atomics.add_get(queue, @queued, rows)
    emit(graph, :request, rows, nil, queued, :atomics.get(queue, @running))
  end

  @spec batch(t(), String.t(), non_neg_integer(), non_neg_integer()) :: :ok
  def batch(queue, graph, rows, partition) do
    queued = :atomics.sub_get(queue, @queued, rows)
    running = :atomics.add_get(queue, @running, rows)
    emit(graph, :batch, rows, partition, queued, running)
  end

  @spec done(t(), String.t(), non_neg_integer(), non_neg_integer()) :: :ok
  def done(queue, graph, rows, partition) do
    running = :atomics.sub_get(queue, @running, rows)
    emit(graph, :done, rows, partition, :atomics.get(queue, @queued), running)
  end

  defp emit(graph, change, rows, partition, queued, running) do
    Telemetry.serving_queue(
      %{queue_length: queued, running: running, rows: rows},
      %{graph: graph, change: change, partition: partition}
    )
  end
end
