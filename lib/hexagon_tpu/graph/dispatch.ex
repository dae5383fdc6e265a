defmodule HexagonTpu.Graph.Dispatch do
  # Where one call of a graph runs, and its NIF answer: the short path on the caller's normal
  # scheduler, a call submitted to the graph's queue and awaited as a message, or a dirty IO
  # scheduler on request; the answer's late parts (stats, error message) fetched from the call;
  # the profiled execute of HexagonTpu.Profile.run/3. Calls HexagonTpu.Graph.CallOptions and
  # HexagonTpu.Graph.Tensors.
  @moduledoc false

  alias HexagonTpu.{Error, NIF}
  alias HexagonTpu.Graph.{CallOptions, Tensors}

  # The core checks what Elixir did not (NaN while quantizing, sizes); its message names the
  # tensor, which the error's :tensor then carries.
  @spec run(HexagonTpu.Graph.t(), [{binary(), atom()}], [atom()], map(), atom()) ::
          {:ok, [binary()], map()} | {:error, Error.t()}
  def run(g, nif_inputs, out_types, o, scheduler) do
    # One call in N of a model loaded with profile_every: N carries a profile (HexagonTpu.Profile):
    # the same call, with its profile in its options.
    case HexagonTpu.Profile.next(g) do
      nil ->
        nif_call(g, nif_inputs, out_types, o, scheduler)

      prof ->
        g
        |> nif_call(nif_inputs, out_types, Map.put(o, :profile, prof), scheduler)
        |> HexagonTpu.Profile.take(g, 1)
    end
    |> Tensors.wrap(g)
  end

  # The short path first (the caller's normal scheduler, bounded by the core's no-wait bound)
  # where it may apply; else, or when the core declines it, the call is submitted to the
  # graph's worker and its answer awaited as a message: no scheduler, normal or dirty, waits
  # while the NPU computes. A per-call profile vote may cross to the DSP: never on the short
  # path. A sampled call (o.profile) goes the same way as its neighbours, the short path
  # included (reading a profile's ops back and making them terms takes tens of microseconds;
  # the event tree is made only when asked for, HexagonTpu.Profile.events/1): on a graph near
  # the short-call limit, one call in N leaving the short path moved many of the next calls
  # off it too, which cost more than the profiles.
  defp nif_call(g, inputs, out_types, o, mode)
       when mode in [:auto, :normal] and o.perf_profile in [nil, :default] do
    submit_mode = if mode == :auto, do: :auto_submit, else: :normal_submit

    answer =
      case Map.get(o, :profile) do
        nil ->
          NIF.graph_execute_normal(g.ref, inputs, out_types, o.perf_profile, submit_mode)

        p ->
          spec = {p.profile_level, p.profile_max_events}
          NIF.graph_execute_normal(g.ref, inputs, out_types, o.perf_profile, submit_mode, spec)
      end

    case answer do
      :declined -> submit_and_wait(g, inputs, out_types, o)
      answer -> answer
    end
  end

  # :dirty_io, asked for explicitly: the call waits on a dirty IO scheduler as before 0.x
  # (kept for callers that rely on it; :auto and :async never use it).
  defp nif_call(g, inputs, out_types, o, :dirty_io) when o.timeout == nil and o.priority == nil do
    case Map.get(o, :profile) do
      nil ->
        NIF.graph_execute(g.ref, inputs, out_types, o.perf_profile)

      p ->
        opts = %{perf_profile: o.perf_profile}
        NIF.graph_execute_profiled(g.ref, inputs, out_types, opts, p.profile_level, 0, 1)
    end
  end

  defp nif_call(g, inputs, out_types, o, _mode), do: submit_and_wait(g, inputs, out_types, o)

  # One submitted call, awaited here (the tag is made in this function, so the receive only
  # scans messages that arrived after it). If this process dies meanwhile, the NIF's monitor
  # cancels the call.
  defp submit_and_wait(g, inputs, out_types, o) do
    tag = make_ref()

    case NIF.graph_submit(g.ref, inputs, out_types, CallOptions.submit_options(g, o), tag) do
      {:ok, call} ->
        receive do
          {:hexagon_tpu, ^tag, answer} -> with_stats(answer, call)
        end

      error ->
        error
    end
  end

  # An answer whose stats the core could not give inside its done callback (:pending) gets
  # them now (NIF.call_stats/1).
  @spec with_stats(term(), reference()) :: term()
  def with_stats({:ok, outputs, :pending}, call),
    do: {:ok, outputs, NIF.call_stats(call) || %{scheduler: :async}}

  def with_stats({:ok, outputs, :pending, profile}, call),
    do: {:ok, outputs, NIF.call_stats(call) || %{scheduler: :async}, profile}

  # An error whose message the core gives only once the call is finished ({:error, :pending}:
  # see c_src/submit.c) gets it now (NIF.call_error/1).
  def with_stats({:error, :pending}, call) do
    NIF.call_error(call) ||
      {:error, Error.new(:unknown, "the submitted call failed; its message was not available")}
  end

  def with_stats(answer, _call), do: answer

  # For HexagonTpu.Profile.run/3: one profiled execute of f32 (or Nx) inputs; the raw profile.
  # `call` may hold the call's :timeout and :priority (else the model's).
  @spec execute_profiled(HexagonTpu.Graph.t(), list(), atom(), non_neg_integer(), map()) ::
          {:ok, map()} | {:error, Error.t()}
  def execute_profiled(g, inputs, level, max_events, call \\ %{}) do
    timeout = Map.get(call, :timeout) || g.timeout
    priority = Map.get(call, :priority) || g.priority || :default

    with {:ok, nif_inputs} <- Tensors.prepare_inputs(g, inputs, :auto) do
      case NIF.graph_execute_profiled(
             g.ref,
             nif_inputs,
             Tensors.output_types(g, :auto),
             %{timeout_ns: CallOptions.timeout_ns(timeout), priority: priority},
             level,
             max_events,
             1
           ) do
        # a deliberate measurement: a profile that could not be read is its error
        {:ok, _bins, _stats, {:dropped, error}} ->
          Error.wrap(error)

        {:ok, _bins, _stats, profile} ->
          {:ok, profile}

        other ->
          Tensors.wrap(other, g)
      end
    end
  end
end
