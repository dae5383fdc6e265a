defmodule HexagonTpu.Call do
  @moduledoc """
  A call submitted with `HexagonTpu.predict_async/3`, whose answer comes back as a message.

  The call is queued on its graph (by priority, then arrival) and run by the graph's worker
  thread in the C core; no BEAM scheduler, normal or dirty, waits while the NPU computes. The
  answer is sent to the process that submitted the call, and only to it, as
  `{:hexagon_tpu, tag, answer}`; `HexagonTpu.await/2` receives it (in that process) and turns
  it into what `HexagonTpu.predict/3` returns. A call is awaited once.

  If the submitting process exits, its calls are cancelled (a waiting call is dropped, a
  running one aborted where the backend has execute signals) and their answers discarded.

  The struct's fields are for `HexagonTpu.await/2`; match on none but `:owner` and `:graph`.

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, %HexagonTpu.Call{} = call} = HexagonTpu.predict_async(model, [<<0::128>>, <<0::128>>])
      iex> call.owner == self()
      true
      iex> {:ok, [_y]} = HexagonTpu.await(call)
      iex> HexagonTpu.close(model)
      :ok
  """

  require HexagonTpu.Graph
  alias HexagonTpu.{Error, Graph, NIF}
  alias HexagonTpu.Graph.{CallOptions, Dispatch, Tensors}

  @enforce_keys [:ref, :tag, :owner, :graph]
  defstruct [:ref, :tag, :owner, :graph, :out_types, :kind, stats: false]

  @type t :: %__MODULE__{
          ref: reference(),
          tag: reference(),
          owner: pid(),
          graph: Graph.t(),
          out_types: [atom()],
          kind: :nx | :binary,
          stats: boolean()
        }

  @submit_where "HexagonTpu.predict_async/3"
  @await_where "HexagonTpu.await/2"

  @doc false
  @spec submit(Graph.t(), term(), keyword()) :: {:ok, t()} | {:error, Error.t()}
  def submit(g, inputs, opts) when Graph.is_graph(g) do
    with :ok <- plain_inputs(inputs),
         {:ok, o, kind, nif_inputs, out_types} <-
           Tensors.prepare_call(g, inputs, opts, @submit_where) do
      tag = make_ref()
      # one call in N of a sampled model carries a profile; its telemetry comes with the answer
      o = Map.put(o, :profile, HexagonTpu.Profile.next(g))

      case NIF.graph_submit(g.ref, nif_inputs, out_types, CallOptions.submit_options(g, o), tag) do
        {:ok, ref} ->
          {:ok,
           %__MODULE__{
             ref: ref,
             tag: tag,
             owner: self(),
             graph: g,
             out_types: out_types,
             kind: kind,
             stats: o.stats
           }}

        error ->
          Tensors.wrap(error, g)
      end
    end
  end

  def submit(other, _inputs, _opts),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{@submit_where}: expected a %HexagonTpu.Graph{}, got #{inspect(other)}"
       )}

  defp plain_inputs(%HexagonTpu.SharedIO{}),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{@submit_where}: takes a list of inputs, not a HexagonTpu.SharedIO (use predict/3)"
       )}

  defp plain_inputs(inputs) do
    if is_list(inputs) and not List.improper?(inputs) and HexagonTpu.Vectorized.any?(inputs),
      do:
        {:error,
         Error.new(
           :invalid_argument,
           "#{@submit_where}: vectorized Nx tensors are not taken here (use predict/3)"
         )},
      else: :ok
  end

  @doc false
  @spec await(t(), timeout()) :: term()
  def await(%__MODULE__{owner: owner} = call, timeout) do
    cond do
      owner != self() ->
        {:error,
         Error.new(
           :invalid_argument,
           "#{@await_where}: the call was submitted by #{inspect(owner)} and only that " <>
             "process receives its answer; await it there (this is #{inspect(self())})"
         )}

      not (timeout == :infinity or (is_integer(timeout) and timeout >= 0)) ->
        {:error,
         Error.new(
           :invalid_option,
           "#{@await_where}: expected the timeout to be a non-negative integer " <>
             "(milliseconds) or :infinity, got #{inspect(timeout)}"
         )}

      true ->
        with :ok <- claim(call) do
          HexagonTpu.Telemetry.execute_span(call.graph.name, fn ->
            receive_answer(call, timeout)
          end)
        end
    end
  end

  def await(other, _timeout),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{@await_where}: expected a %HexagonTpu.Call{}, got #{inspect(other)}"
       )}

  # The call's answer is this caller's from here (a second await is refused). A struct that
  # predict_async/3 did not make (its ref no call of the NIF's) is an error, not a raise.
  defp claim(%__MODULE__{ref: ref, graph: %Graph{name: name}}) when is_binary(name) do
    case NIF.call_claim(ref) do
      :claimed ->
        {:error,
         Error.new(
           :invalid_argument,
           "#{@await_where}: the call was already awaited (a call's answer is received once)"
         )}

      :ok ->
        :ok
    end
  rescue
    ArgumentError -> not_a_call()
  end

  defp claim(_call), do: not_a_call()

  defp not_a_call,
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{@await_where}: expected a %HexagonTpu.Call{} returned by " <>
           "HexagonTpu.predict_async/3, got a struct it did not make"
       )}

  # A receive waits at most 2^32-1 ms at once: a longer timeout is waited in parts.
  @max_after 0xFFFF_FFFF

  # {result, stats for the telemetry :stop event}
  defp receive_answer(%{tag: tag} = call, timeout)
       when is_integer(timeout) and timeout > @max_after do
    receive do
      {:hexagon_tpu, ^tag, answer} -> finish(call, answer)
    after
      @max_after -> receive_answer(call, timeout - @max_after)
    end
  end

  defp receive_answer(%{tag: tag} = call, timeout) do
    receive do
      {:hexagon_tpu, ^tag, answer} -> finish(call, answer)
    after
      timeout ->
        # Cancelled: no answer will be sent, unless it was sent already (then it is in this
        # mailbox, and is the answer).
        case NIF.call_cancel(call.ref) do
          :sent ->
            receive do
              {:hexagon_tpu, ^tag, answer} -> finish(call, answer)
            end

          :ok ->
            {{:error,
              Error.new(
                :timeout,
                "#{@await_where}: no answer from graph '#{call.graph.name}' within " <>
                  "#{timeout} ms; the call was cancelled"
              )}, nil}
        end
    end
  end

  defp finish(call, answer) do
    answer = answer |> HexagonTpu.Profile.take(call.graph, 1) |> Dispatch.with_stats(call.ref)
    result = Tensors.finish_call(call.graph, answer, call.out_types, call.kind, call.stats)

    stats =
      case answer do
        {:ok, _, stats} -> stats
        _ -> nil
      end

    {result, stats}
  end

  @doc false
  # Cancels a call and drops its answer if it was already sent: for HexagonTpu.stream/3 when
  # its consumer stops early. Only in the owner.
  @spec cancel(t()) :: :ok
  def cancel(%__MODULE__{ref: ref, tag: tag}) do
    case NIF.call_cancel(ref) do
      :sent ->
        receive do
          {:hexagon_tpu, ^tag, _} -> :ok
        end

      :ok ->
        :ok
    end
  end

  # ---- streams ---------------------------------------------------------------------------

  @stream_where "HexagonTpu.stream/3"

  @doc false
  # HexagonTpu.stream/3: up to `in_flight` calls submitted ahead of the one awaited; results
  # in input order; calls still in flight when the consumer stops are cancelled.
  @spec stream(Graph.t(), Enumerable.t(), keyword()) :: Enumerable.t()
  def stream(g, enumerable, opts) when Graph.is_graph(g) do
    {in_flight, call_opts} = stream_options(opts)

    Stream.transform(
      enumerable,
      fn -> :queue.new() end,
      fn inputs, q ->
        {ready, q} = submit_with_room(g, inputs, call_opts, q, [])

        if :queue.len(q) > in_flight do
          {{:value, first}, q} = :queue.out(q)
          {Enum.reverse([await_entry(first) | ready]), q}
        else
          {Enum.reverse(ready), q}
        end
      end,
      fn q -> {Enum.map(:queue.to_list(q), &await_entry/1), :queue.new()} end,
      fn q -> Enum.each(:queue.to_list(q), &cancel_entry/1) end
    )
  end

  def stream(other, _enumerable, _opts),
    do:
      raise(
        ArgumentError,
        "#{@stream_where}: expected a %HexagonTpu.Graph{}, got #{inspect(other)}"
      )

  # The options checked once, before the first element (every element would fail alike, and
  # an endless input forever): a bad one raises, as a bad :in_flight does.
  defp stream_options(opts) do
    unless is_list(opts) and Keyword.keyword?(opts) do
      raise ArgumentError,
            "#{@stream_where}: expected the options to be a keyword list, got #{inspect(opts)}"
    end

    with {:error, e} <- HexagonTpu.Options.given_once(opts, @stream_where),
         do: raise(ArgumentError, e.message)

    {in_flight, call_opts} = Keyword.pop(opts, :in_flight, 2)

    unless is_integer(in_flight) and in_flight > 0 do
      raise ArgumentError,
            "#{@stream_where}: expected :in_flight to be a positive integer, got " <>
              inspect(in_flight)
    end

    case CallOptions.validate_call(call_opts, @stream_where) do
      {:ok, _} -> {in_flight, call_opts}
      {:error, error} -> raise ArgumentError, error.message
    end
  end

  # Submits one element's call; where the model's queue is full (its :queue_limit), the
  # stream's own oldest call is awaited first (its result is ready, in order, before this
  # element's) and the submit tried again: a stream never fails its own elements because of
  # its own :in_flight. With none of its own in flight the :busy error is the element's.
  defp submit_with_room(g, inputs, opts, q, ready) do
    case submit(g, inputs, opts) do
      {:ok, call} ->
        {ready, :queue.in(call, q)}

      {:error, %Error{reason: :busy}} = error ->
        case :queue.out(q) do
          {{:value, first}, rest} ->
            submit_with_room(g, inputs, opts, rest, [await_entry(first) | ready])

          {:empty, q} ->
            {ready, :queue.in({:done, error}, q)}
        end

      {:error, _} = error ->
        {ready, :queue.in({:done, error}, q)}
    end
  end

  defp await_entry({:done, result}), do: result
  defp await_entry(%__MODULE__{} = call), do: await(call, :infinity)

  defp cancel_entry({:done, _}), do: :ok
  defp cancel_entry(%__MODULE__{} = call), do: cancel(call)
end
