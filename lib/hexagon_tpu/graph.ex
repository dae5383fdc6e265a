defmodule HexagonTpu.Graph do
  @moduledoc """
  One graph of a context, ready to execute. This is the model `HexagonTpu.load_model/2`
  returns.

  A graph keeps its context (and so its runtime) alive. Executes of one graph are serialized by
  the C core, whatever handle they come through (`open/2` twice on one context and graph gives
  two handles of one graph, sharing its lock and its `timing/1`); different graphs run
  concurrently. Executes run on a dirty IO scheduler, except
  those of a graph whose recent calls were all short, which run on the caller's normal
  scheduler and save the dirty scheduler's round trip (see `execute/3`'s `:scheduler` and
  "Schedulers" in [docs/elixir.md](docs/elixir.md)).

  ## Example

      {:ok, rt} = HexagonTpu.Runtime.open(backend: :reference)
      {:ok, ctx} = HexagonTpu.Context.load(rt, "add.bin")
      {:ok, graph} = HexagonTpu.Graph.open(ctx, graph: "add_f32")
      a = <<1.0::float-32-native, 2.0::float-32-native, 3.0::float-32-native, 4.0::float-32-native>>
      {:ok, [sum]} = HexagonTpu.Graph.execute(graph, [a, a], output: :binary)
      :ok = HexagonTpu.Graph.close(graph)
  """

  alias HexagonTpu.{Context, Error, NIF, NxTensors, Options, Runtime, SharedIO, TensorInfo}
  alias HexagonTpu.Vectorized
  alias HexagonTpu.Graph.{CallOptions, Dispatch, Tensors}

  # This module is the public API; its parts live in lib/hexagon_tpu/graph/ (@moduledoc false),
  # each calling only those below it:
  #   Batch        predict_batch/3's chunks, in one NIF call or as submitted calls
  #   Dispatch     where one call runs (short path, the graph's queue, dirty IO) and its answer
  #   Tensors      a call's inputs for the NIF, its outputs and errors for the caller
  #   CallOptions  the options of open/2, execute/3 and submitted calls; the NIF's call options

  defstruct [
    :ref,
    :name,
    :inputs,
    :outputs,
    :vtcm_bytes,
    :model_info,
    scheduler: :auto,
    profile_every: nil,
    timeout: nil,
    priority: nil
  ]

  @type t :: %__MODULE__{
          ref: reference(),
          name: String.t(),
          inputs: [TensorInfo.t()],
          outputs: [TensorInfo.t()],
          vtcm_bytes: non_neg_integer(),
          model_info: map(),
          scheduler: scheduler(),
          profile_every: HexagonTpu.Profile.sampling() | nil,
          timeout: timeout_ms() | nil,
          priority: priority() | nil
        }

  @doc false
  # A %Graph{} with every field: a map made by hand with only some of them (e.g. without
  # :name) is refused as "not a graph" instead of raising KeyError on the way.
  defguard is_graph(g)
           when is_struct(g, __MODULE__) and is_map_key(g, :ref) and is_map_key(g, :name) and
                  is_map_key(g, :inputs) and is_map_key(g, :outputs) and
                  is_map_key(g, :scheduler) and is_map_key(g, :profile_every) and
                  is_map_key(g, :timeout) and is_map_key(g, :priority) and
                  is_map_key(g, :model_info) and is_map_key(g, :vtcm_bytes)

  @typedoc "Where executes run: see `execute/3`'s `:scheduler`."
  @type scheduler :: :auto | :async | :normal | :dirty_io

  @typedoc "A call's deadline in milliseconds (`:timeout`), counted from its start."
  @type timeout_ms :: pos_integer() | :infinity

  @typedoc "A call's place among the calls waiting for its graph, and the context's QNN priority."
  @type priority :: :low | :normal | :normal_high | :high

  @typedoc "An Nx tensor (when Nx is present) or a binary of native-endian elements."
  @type input :: binary() | struct()
  @type output :: binary() | struct()

  @execute_where "HexagonTpu.Graph.execute/3"

  @doc """
  Opens a graph of the context.

  ## Options

    * `:graph` - the graph's name; may be omitted (or `nil`) when the context holds exactly one
      graph. An unknown name is a `:not_found` error listing the graphs the binary holds.
    * `:scheduler` - where this graph's executes run unless a call says otherwise: `:auto`
      (default), `:dirty_io` or `:normal`; see `execute/3`

  ## Examples

      iex> ctx = HexagonTpu.Context.load!(HexagonTpu.Runtime.open!(backend: :reference), "add.bin")
      iex> {:ok, graph} = HexagonTpu.Graph.open(ctx, graph: "scale_u8")
      iex> graph.name
      "scale_u8"
      iex> {:error, error} = HexagonTpu.Graph.open(ctx, graph: "mul")
      iex> {error.reason, error.message}
      {:not_found, "no graph named 'mul' in this context; it holds 'add_f32', 'scale_u8'"}
      iex> HexagonTpu.Graph.close(graph)
      :ok
  """
  @spec open(Context.t(), keyword()) :: {:ok, t()} | {:error, Error.t()}
  def open(context, opts \\ [])

  def open(%Context{ref: ref} = ctx, opts) do
    with {:ok, o} <- CallOptions.validate_open(opts, "HexagonTpu.Graph.open/2"),
         {:ok, gref, info} <- Error.wrap(NIF.graph_open(ref, o.graph)) do
      {:ok,
       %__MODULE__{
         ref: gref,
         name: info.name,
         inputs: Enum.map(info.inputs, &TensorInfo.from_nif/1),
         outputs: Enum.map(info.outputs, &TensorInfo.from_nif/1),
         vtcm_bytes: info.vtcm_bytes,
         model_info: Map.delete(ctx.info, :graphs),
         scheduler: o.scheduler
       }}
    end
  end

  def open(other, _opts),
    do:
      {:error,
       Error.new(:invalid_argument, "expected a %HexagonTpu.Context{}, got #{inspect(other)}")}

  @doc """
  Like `open/2`, raising `HexagonTpu.Error`.

  ## Examples

      iex> ctx = HexagonTpu.Context.load!(HexagonTpu.Runtime.open!(backend: :reference), "add.bin")
      iex> graph = HexagonTpu.Graph.open!(ctx, graph: "add_f32", scheduler: :dirty_io)
      iex> graph.scheduler
      :dirty_io
      iex> HexagonTpu.Graph.open!(ctx)
      ** (HexagonTpu.Error) invalid_argument: the context holds 2 graphs ('add_f32', 'scale_u8'); name the one to open
  """
  @spec open!(Context.t(), keyword()) :: t()
  def open!(context, opts \\ []), do: Error.unwrap!(open(context, opts))

  @doc """
  The durations of the graph's recent calls, as the C core keeps them (`htpu_graph_get_timing`)
  and `:auto` scheduling reads them: `:samples` (calls recorded since the graph was opened,
  through any handle of it), `:window` (how many of them the window holds, at most 32),
  `:max_ns` (the longest in the window) and `:last_ns` (the most recent), in nanoseconds. A
  call's duration is its own work up to the end of `graphExecute` (input conversion and the
  execute, not the wait for the graph's turn); calls that never reached the backend are not
  recorded.

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, %{samples: 0, window: 0}} = HexagonTpu.Graph.timing(graph)
      iex> for _ <- 1..3, do: {:ok, _} = HexagonTpu.Graph.execute(graph, [<<0::128>>, <<0::128>>])
      iex> {:ok, timing} = HexagonTpu.Graph.timing(graph)
      iex> {timing.samples, timing.window, timing.max_ns >= timing.last_ns}
      {3, 3, true}
      iex> HexagonTpu.Graph.close(graph)
      :ok
  """
  @spec timing(t()) :: {:ok, map()} | {:error, Error.t()}
  def timing(%__MODULE__{ref: ref}), do: Error.wrap(NIF.graph_timing(ref))

  @doc """
  The graph's inputs, in the order `execute/3` takes them.

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> for t <- HexagonTpu.Graph.inputs(graph), do: {t.name, t.type, t.shape}
      [{"a", {:f, 32}, {1, 4}}, {"b", {:f, 32}, {1, 4}}]
  """
  @spec inputs(t()) :: [TensorInfo.t()]
  def inputs(%__MODULE__{inputs: inputs}), do: inputs

  @doc """
  The graph's outputs, in the order `execute/3` returns them.

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> [y] = HexagonTpu.Graph.outputs(graph)
      iex> {y.name, y.type, y.byte_size, y.quantization.zero_point}
      {"y", {:u, 8}, 4, 128}
  """
  @spec outputs(t()) :: [TensorInfo.t()]
  def outputs(%__MODULE__{outputs: outputs}), do: outputs

  @doc """
  What the context binary says about itself (`HexagonTpu.Context.info/1` without `:graphs`):
  `:dsp_arch` (e.g. 68), `:soc_model`, `:soc_version`, `:build_id`, `:backend_id`,
  `:core_api_version`, `:backend_api_version`, `:context_blob_version`, `:context_blob_size`,
  `:binary_info_version`. Compare with `HexagonTpu.Runtime.info/1`'s `:device_arch`.

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> info = HexagonTpu.Graph.model_info(graph)
      iex> {info.dsp_arch, info.build_id}
      {68, "htpu-ref"}
  """
  @spec model_info(t()) :: map()
  def model_info(%__MODULE__{model_info: info}), do: info

  @doc """
  Allocates a `HexagonTpu.SharedIO`: every input and output of the graph in one buffer of
  FastRPC shared memory, to fill, execute with (`execute/3` takes it in place of the inputs)
  and read without copies.

  When FastRPC memory is unavailable the buffer is ordinary memory (`io.fastrpc == false`,
  `io.note` says why); the first time that happens on a runtime a warning is logged, and
  `HexagonTpu.Runtime.info/1` reports it as `:shared_memory_note`.

  ## Options

    * `:env` - OS environment variables set around the allocation only, as
      `HexagonTpu.Runtime.open/1`'s `:env` (for the FastRPC allocator, which reads them in C).
      The tests use it for the reference allocator's `HTPU_REF_RPCMEM_FAIL`

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> {:ok, io} = HexagonTpu.Graph.alloc_io(graph)
      iex> x = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> :ok = HexagonTpu.SharedIO.write_input(io, 0, x)
      iex> {:ok, ^io} = HexagonTpu.Graph.execute(graph, io)
      iex> {:ok, y} = HexagonTpu.SharedIO.read_output(io, 0, output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [1.0, 4.0, 9.0, 12.699999809265137]
      iex> HexagonTpu.SharedIO.close(io)
      :ok
  """
  @spec alloc_io(t(), keyword()) :: {:ok, SharedIO.t()} | {:error, Error.t()}
  def alloc_io(graph, opts \\ [])

  def alloc_io(g, opts) when is_graph(g) do
    # `env:` as for Runtime.open/1 (HTPU_REF_RPCMEM_FAIL=1 makes the reference rpcmem_alloc fail).
    spec = %{env: {&Runtime.Env.check/1, "a list of {name, value | nil} string tuples", []}}

    with {:ok, o} <- Options.validate(opts, spec, "HexagonTpu.Graph.alloc_io/2"),
         {:ok, ref, meta, _offsets} <- Error.wrap(NIF.graph_alloc_io(g.ref, o.env)) do
      if meta.first_fallback do
        # Erlang's :logger (kernel), which Elixir's Logger is built on: Logger itself would
        # need :logger in the application's extra_applications.
        :logger.warning(
          "hexagon_tpu: graph '#{g.name}': shared IO uses ordinary memory, not FastRPC shared " <>
            "memory (#{meta.note}); executes still work, with FastRPC copying the tensors. " <>
            "Said once per runtime; HexagonTpu.Runtime.info/1 has :shared_memory_note",
          %{mfa: {__MODULE__, :alloc_io, 1}}
        )
      end

      {:ok, SharedIO.from_nif(ref, g.name, g.inputs, g.outputs, meta)}
    end
  end

  def alloc_io(other, _opts),
    do:
      {:error,
       Error.new(:invalid_argument, "expected a %HexagonTpu.Graph{}, got #{inspect(other)}")}

  @doc """
  Like `alloc_io/1`, raising `HexagonTpu.Error`.

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> io = HexagonTpu.Graph.alloc_io!(graph)
      iex> HexagonTpu.SharedIO.fastrpc?(io)
      true
      iex> HexagonTpu.Graph.close(graph)
      :ok
      iex> HexagonTpu.Graph.alloc_io!(graph)
      ** (HexagonTpu.Error) closed: the graph is closed
  """
  @spec alloc_io!(t(), keyword()) :: SharedIO.t()
  def alloc_io!(graph, opts \\ []), do: Error.unwrap!(alloc_io(graph, opts))

  @doc """
  Runs the graph once.

  `inputs` is a list in graph-input order. Each is an Nx tensor (its shape must equal the
  tensor's; its type must be the tensor's own type, or `{:f, 32}` to be quantized), or a binary
  of native-endian elements: f32 by default (quantized to the tensor's type by the C core), in
  the tensor's own type with `quantize: :none`. Data already in the tensor's type is handed to
  the backend without a copy. A tensor of another float type (`{:f, 64}`, `{:f, 16}`,
  `{:bf, 16}`) for an input that takes f32 (any input with `quantize: :auto`, an f32 input
  always) is converted to f32 first, in one pass; an integer type other than the tensor's own is
  a `:mismatch` error.

  Vectorized Nx tensors (`Nx.vectorize/2`; inner shape the input's) run one execute per entry
  of their vectorized axes, broadcast against each other as in Nx, and the outputs come back
  vectorized on the same axes (`output: :binary`: each output's entries one after another;
  `stats: true`: the entries' figures added up).

  Returns outputs in graph-output order: dequantized f32 by default, as Nx tensors of the
  output's shape when Nx is present, binaries otherwise. Nx present but its application not
  started is an `:nx_error` (start `:nx`, or pass `output: :binary`), never a raise.

  ## Options

    * `:quantize` - `:auto` (default): f32 inputs are quantized to each tensor's type;
      `:none`: binaries are in the tensor's own type (Nx tensors must be)
    * `:dequantize` - `:auto` (default): outputs are f32; `:none`: outputs in the tensor's own
      type (no conversion)
    * `:output` - `:nx`, `:binary`, or `:auto` (default: `:nx` when Nx is present)
    * `:stats` - `true` returns `{:ok, outputs, stats}` with `:execute_ns` (graphExecute
      alone), `:quantize_ns`, `:dequantize_ns`, `:total_ns` (the C call), `:nif_ns` (the NIF)
      and `:scheduler` (`:normal` or `:dirty_io`: where the call ran), `:executes` (the
      graphExecute calls the call made), `:execute_start_ns` (when its graphExecute began, on
      the OS monotonic clock in ns: with `:execute_ns`, the idle time between two calls'
      executes is the next one's start minus this one's end)
    * `:perf_profile` - a performance profile (`HexagonTpu.Runtime.open/1`) voted for this call
      only when it is higher than the runtime's, then released (`htpu_graph_execute_ex`); e.g.
      `perf_profile: :burst` for one latency-critical call on a power-saving runtime
    * `:scheduler` - where the call runs (default: the graph's, from `open/2` or
      `HexagonTpu.load_model/2`, itself `:auto` by default):
        * `:auto` - on the caller's normal scheduler when the graph's last 32 calls were all
          recorded and each took at most 200 µs (`timing/1`), its inputs and outputs together
          are at most 64 KiB, no `:perf_profile` is asked and nothing would make it wait or
          call into the DSP besides `graphExecute` (the graph free, no model loading, a
          conversion block already allocated and registered); otherwise on a dirty IO
          scheduler. A graph whose calls grow runs one long call on a normal scheduler (the
          one that shows it) and then goes dirty until 32 short calls prove it short again.
          The durations are history; the limit is the core's abort signal: a `graphExecute`
          that stalls in the DSP past 800 µs is stopped and the call made again on the graph's
          queue ([docs/elixir.md](docs/elixir.md), Short calls).
        * `:dirty_io` - always on a dirty IO scheduler
        * `:normal` - on a normal scheduler whatever the graph's durations, still only when
          nothing would make it wait and within the 64 KiB bound, else dirty IO: for a graph
          you know is short (a few microseconds on the board). A call that waits never does
          so on a normal scheduler. A preference, not a guarantee: another call or a model
          load anywhere in the VM can send a `:normal` call to dirty IO (counted in
          `:normal_declined_*`); the result is the same and `:scheduler` says where it ran.

      Either way the call does the same work and gives the same result; `stats: true` and
      the telemetry metadata say where it ran (`:scheduler`), and `HexagonTpu.stats/0` counts
      both paths (`:executes_normal`, `:executes_dirty_io`, `:normal_declined_*`).

  ## With a `HexagonTpu.SharedIO`

  `execute(graph, io)` with an `io` from `alloc_io/1` runs on the inputs already written into
  it and leaves the outputs there: it returns `{:ok, io}` (`{:ok, io, stats}` with
  `stats: true`); read them with `HexagonTpu.SharedIO.read_output/3`. Only `:stats` and
  `:perf_profile` apply.

  When `:telemetry` is loaded, each call emits `[:hexagon_tpu, :execute, :start]` and then
  `[:hexagon_tpu, :execute, :stop]` (measurements `%{duration: graphExecute time (native; the
  call's wall time on an error), execute_ns: ..., ...}`, metadata `%{graph: name, status: :ok
  | {:error, reason}, scheduler: :normal | :dirty_io | nil, telemetry_span_context: ref}`) or,
  if the call raises,
  `[:hexagon_tpu, :execute, :exception]`; see `HexagonTpu.Telemetry`.

  Option errors name this function (`"HexagonTpu.Graph.execute/3: expected :perf_profile to
  be one of ..., got :turbo"`, also through `HexagonTpu.predict/3`); `:mismatch` and `:nan`
  errors set `:tensor` to the input or output concerned.

  ## Examples

  f32 in, quantized to u8 for the graph; the output as f32 and in its own type:

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> x = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> {:ok, [y], stats} = HexagonTpu.Graph.execute(graph, [x], output: :binary, stats: true)
      iex> {for(<<v::float-32-native <- y>>, do: v), stats.scheduler in [:normal, :async]}
      {[1.0, 4.0, 9.0, 12.699999809265137], true}
      iex> {:ok, [q]} = HexagonTpu.Graph.execute(graph, [x], output: :binary, dequantize: :none)
      iex> :binary.bin_to_list(q)
      [138, 168, 218, 255]

  Input already in the tensor's own type (u8, zero point 128, scale 0.1: 1.0 to 4.0):

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> {:ok, [y]} = HexagonTpu.Graph.execute(graph, [<<138, 148, 158, 168>>], quantize: :none, output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [1.0, 4.0, 9.0, 12.699999809265137]

  A NaN cannot be quantized; the error names the input:

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> nan = <<0, 0, 192, 127>> <> <<0::96>>
      iex> {:error, error} = HexagonTpu.Graph.execute(graph, [nan])
      iex> {error.reason, error.tensor}
      {:nan, "x"}
  """
  @spec execute(t(), [input()] | SharedIO.t(), keyword()) ::
          {:ok, [output()] | SharedIO.t()}
          | {:ok, [output()] | SharedIO.t(), map()}
          | {:error, Error.t()}
  def execute(graph, inputs, opts \\ [])

  def execute(g, %SharedIO{} = io, opts) when is_graph(g) do
    HexagonTpu.Telemetry.execute_span(g.name, fn ->
      # one execute in N of a sampled model carries a profile, as on every other path
      prof = HexagonTpu.Profile.next(g)
      spec = prof && {prof.profile_level, prof.profile_max_events}

      with {:ok, o} <- CallOptions.validate_shared(opts, @execute_where),
           {:ok, stats} <-
             g.ref
             |> NIF.graph_execute_shared(io.ref, o.perf_profile, spec)
             |> HexagonTpu.Profile.take(g, 1)
             |> Error.wrap() do
        {if(o.stats, do: {:ok, io, stats}, else: {:ok, io}), stats}
      else
        error -> {error, nil}
      end
    end)
  end

  def execute(g, inputs, opts) when is_graph(g) do
    if is_list(inputs) and not List.improper?(inputs) and Vectorized.any?(inputs),
      do: Vectorized.execute(g, inputs, opts, &execute/3),
      else: execute_once(g, inputs, opts)
  end

  def execute(other, _inputs, _opts),
    do:
      {:error,
       Error.new(:invalid_argument, "expected a %HexagonTpu.Graph{}, got #{inspect(other)}")}

  # The span's fun returns the call's result and, for the :stop event, the core's figures.
  defp execute_once(g, inputs, opts) do
    HexagonTpu.Telemetry.execute_span(g.name, fn ->
      with {:ok, o} <- CallOptions.validate_execute(opts, @execute_where),
           {:ok, kind} <- NxTensors.output_kind(o.output, @execute_where),
           {:ok, nif_inputs} <- Tensors.prepare_inputs(g, inputs, o.quantize),
           out_types = Tensors.output_types(g, o.dequantize),
           scheduler = o.scheduler || g.scheduler,
           {:ok, bins, stats} <- Dispatch.run(g, nif_inputs, out_types, o, scheduler),
           {:ok, outputs} <- Tensors.outputs(g, bins, out_types, kind, stats) do
        {if(o.stats, do: {:ok, outputs, stats}, else: {:ok, outputs}), stats}
      else
        error -> {error, nil}
      end
    end)
  end

  @doc """
  Like `execute/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> [y] = HexagonTpu.Graph.execute!(graph, [<<0::128>>, <<0::128>>], output: :binary)
      iex> byte_size(y)
      16
      iex> HexagonTpu.Graph.execute!(graph, [<<0::128>>, <<0::128>>], scheduler: :fast)
      ** (HexagonTpu.Error) invalid_option: HexagonTpu.Graph.execute/3: expected :scheduler to be :auto, :async, :normal or :dirty_io, got :fast
  """
  @spec execute!(t(), [input()] | SharedIO.t(), keyword()) ::
          [output()] | {[output()], map()} | SharedIO.t() | {SharedIO.t(), map()}
  def execute!(graph, inputs, opts \\ []) do
    case execute(graph, inputs, opts) do
      {:ok, outputs} -> outputs
      {:ok, outputs, stats} -> {outputs, stats}
      {:error, error} -> raise error
    end
  end

  @doc """
  Drops this handle's reference; with it go the context and runtime if nothing else holds them.
  Idempotent; a later `execute/3` gives a `:closed` error. Runs on a dirty scheduler (QNN frees
  can wait on the DSP and on this graph's in-flight executes).

  ## Examples

      iex> graph = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> HexagonTpu.Graph.close(graph)
      :ok
      iex> {:error, error} = HexagonTpu.Graph.execute(graph, [<<0::128>>, <<0::128>>])
      iex> error.reason
      :closed
  """
  @spec close(t()) :: :ok
  def close(%__MODULE__{ref: ref}), do: NIF.graph_close(ref)
end
