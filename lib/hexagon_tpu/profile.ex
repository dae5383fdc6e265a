defmodule HexagonTpu.Profile do
  @moduledoc """
  Where a model's time goes, op by op, from the backend's own profile events (QNN profiling;
  [docs/profiling.md](docs/profiling.md) says how to read the figures on HTP v68 and what each level costs).

  A profile comes from `HexagonTpu.profile/3` (a deliberate measurement: N runs, per op the
  median and minimum) or from sampling in production: a model loaded with
  `profile_every: N` (`HexagonTpu.load_model/2`, `HexagonTpu.Serving.new/2`) makes one execute
  in N carry a profile and emits `[:hexagon_tpu, :profile]` telemetry with its figures; the
  other executes pay nothing.

  The struct:

    * `:graph`, `:level` (`:basic`, `:detailed`, `:linting`, `:optrace`), `:runs`
    * `:ops` - per op, heaviest first: `%{index: position in the graph, name:, us:, min_us:,
      cycles:, min_cycles:, share: percent of the ops' total cycles (or time, where the backend
      gives no cycles per op)}`; empty at `:basic`. `share` is nil when the event cap cut the
      events (`:note` says "truncated"): the ops read are only the first ones
    * `:accel_us`, `:accel_cycles` - the accelerator's total (`:accel_cycles` is 0 where the
      level does not report cycles: HTP gives them at `:detailed`, not at `:basic`);
      `:host_rpc_us`, `:htp_rpc_us` - the two sides of the RPC (medians over the runs)
    * `:host` - `%{quantize_ns:, execute_ns:, dequantize_ns:, total_ns:}`: the host's side of
      the call (converting in, the graphExecute call, converting out, the whole C call)
    * `:note` - `""`, or what the figures lack (`"truncated at 4096 events ..."`, `"the binary
      carries no op names ..."`, `"no optrace data ..."`)
    * `:events` - the raw event tree of the median run: maps with `:type`, `:name`, `:unit`,
      `:value`, `:identifier`, `:timestamp` and `:children` (`:value` of an event of unit
      `:object` is the backend's opaque object, `%{data: binary, file: String.t() | nil}`,
      docs/profiling.md). Per-op figures are kept for every
      run, event trees for 8 runs chosen at random (the one closest to the median accelerator
      time is this one); runs x ops is capped at 16,777,216 samples, past which
      `HexagonTpu.profile/3` is an `:invalid_argument` error after the first run. `nil` in a
      sampled profile (the tree's terms would cost a sampled call as much as the rest of its
      profiling): `events/1` makes it from the profile when asked
    * `:total_events`, `:dropped_events`, `:extended`

  `write_trace/2` and `write_page/3` write the median run as a Chrome trace (Perfetto,
  chrome://tracing) or as one self-contained HTML page.
  """

  require HexagonTpu.Graph
  alias HexagonTpu.{Error, Graph, NIF, Options}
  alias HexagonTpu.Graph.{CallOptions, Dispatch}

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
      {{:integer_in, 1, @max_events_limit}, "an integer from 1 to #{@max_events_limit}", 4096},
    # each run's, as predict/3's (nil: the model's)
    timeout: {&CallOptions.check_timeout/1, "", nil},
    priority: {{:one_of, CallOptions.priorities()}, CallOptions.priorities_expected(), nil}
  }

  @doc false
  def levels, do: @levels

  @doc false
  def levels_expected, do: @levels_expected

  # What a run leaves behind in run/3: its totals and per-op figures packed in one binary (64
  # bytes and 16 an op), and its raw profile (the event tree) only while it is one of
  # @keep_trees kept at random (reservoir sampling); the tree shown is the kept run closest to
  # the median accelerator time. Per-op samples (ops x runs) are bounded by @max_samples.
  @keep_trees 8
  @max_samples 16_777_216
  @fig_keys [:accel_us, :accel_cycles, :host_rpc_us, :htp_rpc_us]
  @host_keys [:quantize_ns, :execute_ns, :dequantize_ns, :total_ns]

  @doc false
  def max_samples, do: @max_samples

  @doc false
  # HexagonTpu.profile/3 (whose doc holds the options): `:runs` executes of `graph` with a
  # profile of `:level` on `inputs`, summarized.
  @spec run(Graph.t(), [Graph.input()], keyword()) :: {:ok, t()} | {:error, Error.t()}
  def run(graph, inputs, opts) when Graph.is_graph(graph) do
    with {:ok, o} <- Options.validate(opts, @run_spec, "HexagonTpu.profile/3") do
      Enum.reduce_while(1..o.runs, new_acc(), fn _, acc ->
        with {:ok, raw} <- Dispatch.execute_profiled(graph, inputs, o.level, o.max_events, o),
             :ok <- check_samples(acc, raw, o.runs) do
          {:cont, add_run(acc, raw)}
        else
          error -> {:halt, error}
        end
      end)
      |> case do
        %{runs: _} = acc -> {:ok, finish(acc)}
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
  # op, the events of the kept run closest to the median.
  @spec summarize([map()]) :: t()
  def summarize([_ | _] = raws), do: raws |> Enum.reduce(new_acc(), &add_run(&2, &1)) |> finish()

  defp new_acc,
    do: %{
      runs: 0,
      first: nil,
      packed: [],
      trees: [],
      partial: false,
      rand: :rand.seed_s(:exsss, {22, 7, 2})
    }

  # The first run decides the ops; past the cap, a clear error before the runs are made.
  defp check_samples(%{runs: 0}, raw, runs) do
    n = length(raw.ops)

    if n * runs > @max_samples do
      {:error,
       Error.new(
         :invalid_argument,
         "HexagonTpu.profile/3: #{runs} runs of #{n} ops make #{n * runs} per-op samples, " <>
           "past the limit of #{@max_samples} (16 bytes each); use fewer runs " <>
           "(#{div(@max_samples, n)} at most for this model)"
       )}
    else
      :ok
    end
  end

  defp check_samples(_acc, _raw, _runs), do: :ok

  defp add_run(acc, raw) do
    figs = for k <- @fig_keys, into: <<>>, do: <<Map.fetch!(raw, k)::64>>
    host = for k <- @host_keys, into: <<>>, do: <<Map.fetch!(raw.host, k)::64>>
    ops = for op <- raw.ops, into: <<>>, do: <<op.us::64, op.cycles::64>>
    run = acc.runs

    first =
      acc.first ||
        %{
          graph: raw.graph,
          level: raw.level,
          ops: Enum.map(raw.ops, &Map.take(&1, [:index, :name]))
        }

    # reservoir sampling: every run's tree is kept with the same chance
    kept = {run, Map.delete(raw, :ops)}

    {trees, rand} =
      if run < @keep_trees do
        {[kept | acc.trees], acc.rand}
      else
        {slot, rand} = :rand.uniform_s(run + 1, acc.rand)

        if slot <= @keep_trees,
          do: {List.replace_at(acc.trees, slot - 1, kept), rand},
          else: {acc.trees, rand}
      end

    %{
      acc
      | runs: run + 1,
        first: first,
        packed: [figs <> host <> ops | acc.packed],
        partial: acc.partial or raw.dropped_events > 0,
        trees: trees,
        rand: rand
    }
  end

  defp finish(%{first: first, packed: packed, runs: runs} = acc) do
    ops =
      first.ops
      |> Enum.with_index()
      |> Enum.map(fn {op, k} ->
        at = 64 + 16 * k

        {us, cycles} =
          for <<_::binary-size(at), u::64, c::64, _::binary>> <- packed, reduce: {[], []} do
            {us, cycles} -> {[u | us], [c | cycles]}
          end

        us = Enum.sort(us)
        cycles = Enum.sort(cycles)

        %{
          index: op.index,
          name: op.name,
          us: median_sorted(us),
          min_us: List.first(us, 0),
          cycles: median_sorted(cycles),
          min_cycles: List.first(cycles, 0)
        }
      end)

    # shares in one unit (cycles where the backend gives them per op, else time); none when
    # some run's tree was cut at the event cap: the ops read are only the first ones
    partial = Enum.any?(acc.trees, fn {_, t} -> t.dropped_events > 0 end) or acc.partial
    unit = if Enum.any?(ops, &(&1.cycles > 0)), do: :cycles, else: :us
    total = ops |> Enum.map(&Map.fetch!(&1, unit)) |> Enum.sum()

    share = fn op ->
      cond do
        partial -> nil
        total > 0 -> 100 * Map.fetch!(op, unit) / total
        true -> 0.0
      end
    end

    ops =
      ops
      |> Enum.map(&Map.put(&1, :share, share.(&1)))
      |> Enum.sort_by(&{-Map.fetch!(&1, unit), &1.index})

    med = fn i ->
      packed |> Enum.map(&:binary.decode_unsigned(binary_part(&1, 8 * i, 8))) |> median()
    end

    [accel_us, accel_cycles, host_rpc_us, htp_rpc_us] = Enum.map(0..3, med)
    host = @host_keys |> Enum.with_index(4) |> Map.new(fn {k, i} -> {k, med.(i)} end)

    # the kept run closest to the median accelerator time; the earliest on a tie
    {_, median_run} = Enum.min_by(acc.trees, fn {r, t} -> {abs(t.accel_us - accel_us), r} end)

    %__MODULE__{
      graph: first.graph,
      level: first.level,
      runs: runs,
      ops: ops,
      accel_us: accel_us,
      accel_cycles: accel_cycles,
      host_rpc_us: host_rpc_us,
      htp_rpc_us: htp_rpc_us,
      host: host,
      note: median_run.note,
      events: median_events(median_run.ref),
      total_events: median_run.total_events,
      dropped_events: median_run.dropped_events,
      extended: median_run.extended,
      ref: median_run.ref
    }
  end

  # the tree of the run shown: made from its profile (a profile the NIF just made)
  defp median_events(ref) do
    {:ok, events} = NIF.profile_events(ref)
    events
  end

  defp median(values), do: values |> Enum.sort() |> median_sorted()

  defp median_sorted([]), do: 0
  defp median_sorted(sorted), do: Enum.at(sorted, div(length(sorted) - 1, 2))

  @doc """
  Writes the profile's median run as Chrome trace-event JSON (Perfetto, chrome://tracing): the
  host's spans on one track (the profiler's own setup and read among them), the accelerator
  and its ops on another. A regular file or new path is replaced atomically (a symlink keeps
  pointing at its target, which gets the content); a device or FIFO is written directly. A file
  that cannot be written (a directory, a missing parent, a full device) is an `:io` error
  naming it; nothing is left behind ([docs/profiling.md](docs/profiling.md), "The outputs").

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

  def write_page(%__MODULE__{}, path, title) when is_binary(path) do
    {:error,
     Error.new(
       :invalid_argument,
       "HexagonTpu.Profile.write_page/3: expected the title to be a string or nil, got " <>
         inspect(title, limit: 3)
     )}
  end

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
  `:identifier`, `:timestamp` and `:children`. Anything but a profile hexagon_tpu made is an
  `:invalid_argument` error.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> profile = HexagonTpu.profile!(model, [<<0::size(128)>>, <<0::size(128)>>], runs: 1)
      iex> {:ok, [%{name: "execute", children: children}]} = HexagonTpu.Profile.events(profile)
      iex> Enum.any?(children, &(&1.name == "accelerator time"))
      true
      iex> {:error, error} = HexagonTpu.Profile.events(%HexagonTpu.Profile{events: nil})
      iex> error.reason
      :invalid_argument
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec events(t()) :: {:ok, [map()]} | {:error, Error.t()}
  def events(%__MODULE__{events: events}) when is_list(events), do: {:ok, events}

  def events(%__MODULE__{events: nil, ref: ref}), do: Error.wrap(NIF.profile_events(ref))

  def events(other) do
    {:error,
     Error.new(
       :invalid_argument,
       "HexagonTpu.Profile.events/1: expected a %HexagonTpu.Profile{}, got " <>
         inspect(other, limit: 3)
     )}
  end

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

        level == :linting and not caps.linting ->
          unsupported(
            "#{where}: profile_level: :linting is HTP's own level (QNN 7001) and this backend " <>
              "is not HTP; use :detailed"
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

  # One sampled call's profile: its ops heaviest first with their shares (none when the tree was
  # cut at the event cap, as in finish/1), its figures, no event tree (events/1). Linear in the
  # ops: a sample is made on the caller's process, one call in N.
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
          share:
            cond do
              raw.dropped_events > 0 -> nil
              total > 0 -> 100 * weight.(op) / total
              true -> 0.0
            end
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
