defmodule HexagonTpu.Profile do
  @moduledoc """
  Where a model's time goes, op by op, from the backend's own profile events (QNN profiling;
  docs/profiling.md says how to read the figures on HTP v68 and what each level costs).

  A profile comes from `HexagonTpu.profile/3` (a deliberate measurement: N runs, per op the
  median and minimum) or from sampling in production: a model loaded with
  `profile_every: N` (`HexagonTpu.load_model/2`, `HexagonTpu.Serving.new/2`) makes one execute
  in N carry a profile and emits `[:hexagon_tpu, :profile]` telemetry with its figures; the
  other executes pay nothing.

  The struct:

    * `:graph`, `:level` (`:basic`, `:detailed`, `:linting`, `:optrace`), `:runs`
    * `:ops` - per op, heaviest first: `%{index: position in the graph, name:, us:, min_us:,
      cycles:, min_cycles:, share: percent of the accelerator's cycles (or time)}`; empty at
      `:basic`
    * `:accel_us`, `:accel_cycles` - the accelerator's total; `:host_rpc_us`, `:htp_rpc_us` -
      the two sides of the RPC (medians over the runs)
    * `:host` - `%{quantize_ns:, execute_ns:, dequantize_ns:, total_ns:}`: the host's side of
      the call (converting in, the graphExecute call, converting out, the whole C call)
    * `:note` - `""`, or what the figures lack (`"truncated at 4096 events ..."`, `"the binary
      carries no op names ..."`)
    * `:events` - the raw event tree of the median run: maps with `:type`, `:name`, `:unit`,
      `:value`, `:identifier`, `:timestamp` and `:children`. `nil` in a sampled profile (the
      tree's terms would cost a sampled call as much as the rest of its profiling): `events/1`
      makes it from the profile when asked
    * `:total_events`, `:dropped_events`, `:extended`

  `write_trace/2` and `write_page/3` write the median run as a Chrome trace (Perfetto,
  chrome://tracing) or as one self-contained HTML page.
  """

  alias HexagonTpu.{Error, Graph, NIF, Options}

  defstruct [
    :graph,
    :level,
    :runs,
    :accel_us,
    :accel_cycles,
    :host_rpc_us,
    :htp_rpc_us,
    :note,
    :total_events,
    :dropped_events,
    :extended,
    :ref,
    ops: [],
    events: [],
    host: %{}
  ]

  @type level :: :basic | :detailed | :linting | :optrace
  @type t :: %__MODULE__{}

  @typedoc "A model's sampling state (`profile_every:`), kept in the `HexagonTpu.Graph`."
  @type sampling :: %{every: pos_integer(), level: level(), counter: :atomics.atomics_ref()}

  @levels [:basic, :detailed, :linting, :optrace]
  @levels_expected ":basic, :detailed, :linting or :optrace"
  # htpu_profile_max_events limit (HTPU_PROFILE_MAX_EVENTS_LIMIT)
  @max_events_limit 1_048_576

  @run_spec %{
    level: {{:one_of, @levels}, @levels_expected, :detailed},
    runs: {{:integer_in, 1, 100_000}, "an integer from 1 to 100000", 10},
    max_events:
      {{:integer_in, 1, @max_events_limit}, "an integer from 1 to #{@max_events_limit}", 4096}
  }

  @doc false
  def levels, do: @levels

  @doc false
  def levels_expected, do: @levels_expected

  @doc false
  # HexagonTpu.profile/3 (whose doc holds the options): `:runs` executes of `graph` with a
  # profile of `:level` on `inputs`, summarized.
  @spec run(Graph.t(), [Graph.input()], keyword()) :: {:ok, t()} | {:error, Error.t()}
  def run(%Graph{} = graph, inputs, opts) do
    with {:ok, o} <- Options.validate(opts, @run_spec, "HexagonTpu.profile/3") do
      1..o.runs
      |> HexagonTpu.Results.map_ok(fn _ ->
        Graph.execute_profiled(graph, inputs, o.level, o.max_events)
      end)
      |> case do
        {:ok, raws} -> {:ok, summarize(raws)}
        error -> error
      end
    end
  end

  def run(other, _inputs, _opts),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "HexagonTpu.profile/3: expected a model, got #{inspect(other)}"
       )}

  @doc false
  # The summary of raw profiles (as the NIF reads them), one per run: medians and minimums per
  # op, the median run's events.
  @spec summarize([map()]) :: t()
  def summarize([first | _] = raws) do
    runs = length(raws)
    median_run = Enum.sort_by(raws, & &1.accel_us) |> Enum.at(div(runs - 1, 2))

    ops =
      first.ops
      |> Enum.map(fn op ->
        samples = Enum.map(raws, fn r -> Enum.at(r.ops, op.index, %{us: 0, cycles: 0}) end)
        us = Enum.map(samples, & &1.us)
        cycles = Enum.map(samples, & &1.cycles)

        %{
          index: op.index,
          name: op.name,
          us: median(us),
          min_us: Enum.min(us),
          cycles: median(cycles),
          min_cycles: Enum.min(cycles)
        }
      end)

    weight = fn op -> if op.cycles > 0, do: op.cycles, else: op.us end
    total = ops |> Enum.map(weight) |> Enum.sum()

    ops =
      ops
      |> Enum.map(&Map.put(&1, :share, if(total > 0, do: 100 * weight.(&1) / total, else: 0.0)))
      |> Enum.sort_by(&{-weight.(&1), &1.index})

    med = fn key -> raws |> Enum.map(&Map.fetch!(&1, key)) |> median() end

    host =
      for k <- [:quantize_ns, :execute_ns, :dequantize_ns, :total_ns], into: %{} do
        {k, raws |> Enum.map(& &1.host[k]) |> median()}
      end

    %__MODULE__{
      graph: first.graph,
      level: first.level,
      runs: runs,
      ops: ops,
      accel_us: med.(:accel_us),
      accel_cycles: med.(:accel_cycles),
      host_rpc_us: med.(:host_rpc_us),
      htp_rpc_us: med.(:htp_rpc_us),
      host: host,
      note: median_run.note,
      events: NIF.profile_events(median_run.ref),
      total_events: median_run.total_events,
      dropped_events: median_run.dropped_events,
      extended: median_run.extended,
      ref: median_run.ref
    }
  end

  defp median(values) do
    sorted = Enum.sort(values)
    Enum.at(sorted, div(length(sorted) - 1, 2))
  end

  @doc """
  Writes the profile's median run as Chrome trace-event JSON (Perfetto, chrome://tracing): the
  host's spans on one track, the accelerator and its ops on another. A file that cannot be
  written is an `:io` error naming it; nothing is left half-written.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> profile = HexagonTpu.profile!(model, [<<0::size(128)>>, <<0::size(128)>>], runs: 2)
      iex> HexagonTpu.Profile.write_trace(profile, "add_trace.json")
      :ok
      iex> File.read!("add_trace.json") =~ "ElementWiseAdd_0"
      true
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec write_trace(t(), Path.t()) :: :ok | {:error, Error.t()}
  def write_trace(%__MODULE__{ref: ref}, path) when is_binary(path),
    do: Error.wrap(NIF.profile_write(ref, :trace, path, ""))

  def write_trace(profile, path), do: bad_write("write_trace/2", profile, path)

  @doc """
  Writes the profile's median run as one self-contained HTML page (no network): a per-op bar
  chart and the timeline. `title` defaults to the graph's name.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> profile = HexagonTpu.profile!(model, [<<0::size(128)>>, <<0::size(128)>>], runs: 2)
      iex> HexagonTpu.Profile.write_page(profile, "add.html", "add, detailed")
      :ok
      iex> {:error, error} = HexagonTpu.Profile.write_page(profile, "no/such/dir/add.html")
      iex> error.message
      "cannot write 'no/such/dir/add.html': No such file or directory"
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec write_page(t(), Path.t(), String.t() | nil) :: :ok | {:error, Error.t()}
  def write_page(profile, path, title \\ nil)

  def write_page(%__MODULE__{ref: ref, graph: graph, level: level}, path, title)
      when is_binary(path) and (is_binary(title) or is_nil(title)),
      do: Error.wrap(NIF.profile_write(ref, :page, path, title || "#{graph} (#{level})"))

  def write_page(profile, path, _title), do: bad_write("write_page/3", profile, path)

  defp bad_write(fun, profile, path) do
    {:error,
     Error.new(
       :invalid_argument,
       "HexagonTpu.Profile.#{fun}: expected a %HexagonTpu.Profile{} and a path (a string), " <>
         "got #{inspect(profile, limit: 3)} and #{inspect(path)}"
     )}
  end

  @doc """
  The raw event tree of a profile: its `:events`, or, for a sampled profile (whose `:events`
  is `nil`), the tree made from the profile now. Maps with `:type`, `:name`, `:unit`, `:value`,
  `:identifier`, `:timestamp` and `:children`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> profile = HexagonTpu.profile!(model, [<<0::size(128)>>, <<0::size(128)>>], runs: 1)
      iex> [%{name: "execute", children: children}] = HexagonTpu.Profile.events(profile)
      iex> Enum.any?(children, &(&1.name == "accelerator time"))
      true
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec events(t()) :: [map()]
  def events(%__MODULE__{events: events}) when is_list(events), do: events
  def events(%__MODULE__{events: nil, ref: ref}), do: NIF.profile_events(ref)

  # ---- sampling (profile_every: N) ----------------------------------------------------------

  @doc false
  # load_model's profile_every/profile_level options: checked there, kept in the graph.
  def valid_every?(v), do: is_nil(v) or (is_integer(v) and v >= 1 and v <= 1_000_000_000)

  @doc false
  @spec attach(Graph.t(), pos_integer() | nil, level()) :: Graph.t()
  def attach(graph, nil, _level), do: graph

  # counter: [1] calls so far, [2] profiles dropped (the first one is logged)
  def attach(graph, every, level),
    do: %{graph | profile_every: %{every: every, level: level, counter: :atomics.new(2, [])}}

  @doc false
  # load_model's check of profile_every: a backend that does not announce profiling, or the
  # level asked for, is refused at load with the capability named (as `htpu profile` and the
  # C core name it), instead of failing one call in N in production.
  @spec check_backend(HexagonTpu.Runtime.t(), pos_integer() | nil, level(), String.t()) ::
          :ok | {:error, Error.t()}
  def check_backend(_runtime, nil, _level, _where), do: :ok

  def check_backend(runtime, _every, level, where) do
    with {:ok, caps} <- Error.wrap(NIF.runtime_profile_caps(runtime.ref)) do
      cond do
        not caps.profiling ->
          unsupported(
            "#{where}: profile_every: the backend does not announce profiling (capability " <>
              "1401, QNN_PROPERTY_GROUP_PROFILE), so no execute could carry a profile; load " <>
              "without :profile_every"
          )

        level == :optrace and not caps.optrace ->
          unsupported(
            "#{where}: profile_level: :optrace: the backend does not announce the optrace " <>
              "config (capability 1405, QNN_PROPERTY_PROFILE_SUPPORT_OPTRACE_CONFIG); use " <>
              ":detailed"
          )

        true ->
          :ok
      end
    end
  end

  defp unsupported(message), do: {:error, Error.new(:unsupported, message)}

  @doc false
  # One call in N of a sampled model (the first, then every Nth): the NIF options that make
  # the call carry a profile (merged into the call's own: the same path, deadline, priority and
  # perf vote as the call would have unsampled), else nil.
  @spec next(Graph.t()) :: %{profile_level: level(), profile_max_events: 0} | nil
  def next(%Graph{profile_every: nil}), do: nil

  def next(%Graph{profile_every: s}) do
    if rem(:atomics.add_get(s.counter, 1, 1) - 1, s.every) == 0,
      do: %{profile_level: s.level, profile_max_events: 0}
  end

  @doc false
  # A sampled call's NIF answer, {:ok, outputs, stats, profile} ({:ok, stats, profile} for a
  # shared-IO execute), made into the unsampled call's: the profile goes to telemetry, or, if
  # it could not be read ({:dropped, error}), is counted, logged once per model and reported
  # as [:hexagon_tpu, :profile, :dropped]. Anything else passes unchanged.
  @spec take(term(), Graph.t(), pos_integer()) :: term()
  def take({:ok, outputs, stats, profile}, g, chunks) do
    sample(g, profile, stats, chunks)
    {:ok, outputs, stats}
  end

  def take({:ok, stats, profile}, g, chunks) when is_map(stats) do
    sample(g, profile, stats, chunks)
    {:ok, stats}
  end

  def take(answer, _g, _chunks), do: answer

  defp sample(g, {:dropped, error}, _stats, _chunks), do: dropped(g, error)
  defp sample(_g, raw, stats, chunks), do: emit(sampled(raw), stats, chunks)

  # One sampled call's profile: its ops heaviest first with their shares, its figures, no event
  # tree (events/1). Linear in the ops: a sample is made on the caller's process, one call in N.
  defp sampled(raw) do
    {weight, total} = weights(raw.ops)

    ops =
      raw.ops
      |> Enum.map(fn op ->
        %{
          index: op.index,
          name: op.name,
          us: op.us,
          min_us: op.us,
          cycles: op.cycles,
          min_cycles: op.cycles,
          share: if(total > 0, do: 100 * weight.(op) / total, else: 0.0)
        }
      end)
      |> Enum.sort_by(&{-weight.(&1), &1.index})

    %__MODULE__{
      graph: raw.graph,
      level: raw.level,
      runs: 1,
      ops: ops,
      accel_us: raw.accel_us,
      accel_cycles: raw.accel_cycles,
      host_rpc_us: raw.host_rpc_us,
      htp_rpc_us: raw.htp_rpc_us,
      host: raw.host,
      note: raw.note,
      events: nil,
      total_events: raw.total_events,
      dropped_events: raw.dropped_events,
      extended: raw.extended,
      ref: raw.ref
    }
  end

  # Shares are of the cycles where the backend gives them (detailed), else of the time.
  defp weights(ops) do
    cycles? = Enum.any?(ops, &(&1.cycles > 0))
    weight = if cycles?, do: & &1.cycles, else: & &1.us
    {weight, ops |> Enum.map(weight) |> Enum.sum()}
  end

  defp dropped(%Graph{profile_every: s} = g, error) do
    {:error, e} = Error.wrap(error)
    level = if s, do: s.level

    if s && :atomics.add_get(s.counter, 2, 1) == 1 do
      # Erlang's :logger (kernel), as elsewhere in this library (Logger would need :logger in
      # the application's extra_applications).
      :logger.warning(
        "hexagon_tpu: graph '#{g.name}': a sampled #{level} profile could not be read and " <>
          "was dropped (the call itself succeeded): #{e.message}. Said once per model; " <>
          "drops are counted in HexagonTpu.stats().profiles_dropped and emitted as " <>
          "[:hexagon_tpu, :profile, :dropped]",
        %{mfa: {__MODULE__, :take, 3}}
      )
    end

    HexagonTpu.Telemetry.profile_dropped(%{count: 1}, %{graph: g.name, level: level, error: e})
  end

  defp emit(p, stats, chunks) do
    measurements = %{
      accel_us: p.accel_us,
      accel_cycles: p.accel_cycles,
      host_rpc_us: p.host_rpc_us,
      htp_rpc_us: p.htp_rpc_us,
      execute_ns: p.host.execute_ns,
      total_ns: p.host.total_ns
    }

    ops = Enum.map(p.ops, &Map.take(&1, [:index, :name, :us, :cycles, :share]))

    HexagonTpu.Telemetry.profile(measurements, %{
      graph: p.graph,
      level: p.level,
      ops: ops,
      note: p.note,
      chunks: chunks,
      call_execute_ns: if(is_map(stats), do: stats[:execute_ns]),
      profile: p
    })
  end
end
