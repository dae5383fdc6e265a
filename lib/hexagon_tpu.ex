# The package's front door: its public functions and their docs (with doctests); the work
# behind them lives in the HexagonTpu.* modules.
defmodule HexagonTpu do
  @moduledoc """
  Run pre-compiled neural networks (QNN context binaries) on the Qualcomm Hexagon NPU.

      {:ok, model} = HexagonTpu.load_model("/data/mobilenet_v2.bin")
      {:ok, [scores]} = HexagonTpu.predict(model, [image])

  Inputs are f32 Nx tensors (or binaries) and are quantized to each input's type from the
  model's own metadata; outputs come back dequantized as f32. Everything runs through the C
  library `include/hexagon_tpu.h`; long calls run on dirty schedulers.

  Layers, for when `load_model/2` is not enough:

    * `HexagonTpu.Runtime` - the QNN libraries (`backend: :reference` runs anywhere)
    * `HexagonTpu.Context` - a loaded context binary, possibly with several graphs
    * `HexagonTpu.Graph` - one graph: `inputs/1`, `outputs/1`, `execute/3`, `alloc_io/1`
    * `HexagonTpu.SharedIO` - preallocated zero-copy input/output buffers (FastRPC memory)
    * `HexagonTpu.TensorInfo` - name, type, shape and quantization of a tensor
    * `HexagonTpu.Error` - the error every function returns (and `!` functions raise)

  Handles are freed by garbage collection (off the schedulers, in dependency order) or
  deterministically with `close/1`; whatever is still open when the VM stops in order (the
  end of a script, `System.stop/0`) is closed on the way down (`close_all/0`).

  ## The examples

  The examples in these pages run as the project's tests (doctests). Those that need a model
  load `add.bin`, the model of the README's quick start, made from `examples/add.txt` by the
  reference builder the package builds into `priv/`:

      _build/dev/lib/hexagon_tpu/priv/htpu-refbuild examples/add.txt add.bin

  It holds two graphs for the reference backend (`backend: :reference`, which runs anywhere):
  `add_f32` adds two f32 inputs of shape `{1, 4}`, and `scale_u8` multiplies a u8 input
  (scale 0.1, zero point 128) by `[0.5, 1.0, 1.5, 2.0]`, so f32 inputs are quantized and the
  outputs dequantized. Inputs and outputs are f32 binaries (`output: :binary`), the same with
  or without Nx; with Nx they may be tensors (`Nx.tensor([[1.0, 2.0, 3.0, 4.0]])`).
  """

  alias HexagonTpu.{Context, Error, Graph, NIF}

  @typedoc "A loaded model: one graph, ready to run."
  @type model :: Graph.t()

  @doc """
  Loads a context binary and opens one of its graphs.

  `source` is a path, `{:file, path}` or `{:binary, bytes}` (see `HexagonTpu.Context.load/3`).

  ## Options

    * `:graph` - the graph's name when the context holds several: only that graph is loaded
      (the others are never deserialized, where the backend announces it); of an ONNX
      EPContext model holding several context binaries, the one holding it. A model is one
      graph: the `:graphs` list is `HexagonTpu.Context.load/3`'s
    * `:memory_limit_mb`, `:mapping` - see `HexagonTpu.Context.load/3`
    * `:scheduler` - where the model's executes run by default: `:auto` (default: on the
      caller's normal scheduler once the model's calls are known to be short, else on a dirty
      IO scheduler), `:dirty_io` or `:normal`; `predict/3` takes it per call too. See
      `HexagonTpu.Graph.execute/3`
    * `:runtime` - a `HexagonTpu.Runtime` to load into; by default the runtime shared by all
      models loaded with the same runtime options (`HexagonTpu.Runtime.shared/1`)
    * `:backend`, `:system_library`, `:dsp_library_path`, `:log_level`, `:backend_id`,
      `:skip_device`, `:perf_profile`, `:fastrpc_library`, `:recovery`, `:startup_retries`,
      `:startup_retry_delay_ms`, `:npu_lock`, `:npu_lock_timeout` - runtime options (see
      `HexagonTpu.Runtime.open/1`), used when
      `:runtime` is not given; e.g. `backend: :reference` runs the reference backend, and
      `perf_profile: :burst` loads into the shared runtime voting burst (models loaded with
      other options share another runtime). To change the profile of a runtime already open,
      `HexagonTpu.Runtime.set_perf_profile/2`; for single calls, `predict/3`'s `:perf_profile`
    * `:profile_every` - `N`: one execute in N (the first, then every Nth) carries a QNN
      profile and emits `[:hexagon_tpu, :profile]` telemetry with its per-op figures
      (`HexagonTpu.Profile`); the other executes pay nothing. A sampled call keeps its path,
      `:timeout` and `:priority`; a profile that cannot be read is dropped, never the call's
      answer (`[:hexagon_tpu, :profile, :dropped]`). A backend that does not announce
      profiling (capability 1401), or `:optrace` (1405), is refused here (`:unsupported`).
      `nil` (default): none
    * `:profile_level` - the level of those profiles: `:detailed` (default), `:basic`,
      `:linting` or `:optrace`
    * `:timeout` - in milliseconds (a positive integer or `:infinity`): bounds the load (on a
      backend that announces loads with signals, as every HTP release does, a load past it
      is stopped and returns a `:timeout` error naming the binary and the limit; elsewhere
      the load runs to its end), bounds its waits for the execute gate and the NPU lock (and,
      when the shared runtime has to be opened for it, that open's) and is the default
      deadline of the model's calls (`predict/3`); `nil` (default): the load unbounded, calls
      60 s
    * `:priority` - the model's priority: `:low`, `:normal` (default), `:normal_high` or
      `:high`: given to QNN as the context's priority where the backend announces priority
      control (every HTP release does; `HexagonTpu.Runtime.info/1`'s `:priority_control`),
      and its calls' default place in the model's queue (`predict/3`)
    * `:queue_limit` - how many calls may wait for the model at once (a positive integer);
      one more gets a `:busy` error naming this option. `nil` (default): no limit but memory,
      so any number of concurrent `predict/3` callers (and `stream/3`'s `:in_flight`) wait
      their turn; each waiting call holds its inputs

  ## Examples

      iex> {:ok, model} = HexagonTpu.load_model("add.bin", backend: :reference, graph: "add_f32")
      iex> {model.name, Enum.map(model.inputs, & &1.name)}
      {"add_f32", ["a", "b"]}
      iex> HexagonTpu.close(model)
      :ok

  A context of several graphs needs `:graph`:

      iex> {:error, error} = HexagonTpu.load_model("add.bin", backend: :reference)
      iex> error.message
      "the context holds 2 graphs ('add_f32', 'scale_u8'); name the one to open"
  """
  @spec load_model(Context.source(), keyword()) :: {:ok, model()} | {:error, Error.t()}
  def load_model(source, opts \\ []), do: HexagonTpu.Models.Load.load_model(source, opts)

  @doc """
  Loads several context binaries in one call, one model each, as `load_model/2` would one by
  one, and returns each one's result in order: `{:ok, [{:ok, model} | {:error, error}]}`.

  Where the backend announces `contextCreateFromBinaryListAsync` (`HexagonTpu.Runtime.info/1`'s
  `:list_load`; QAIRT 2.25 to 2.33 do), the binaries are deserialized at once, so the call takes
  about as long as the slowest load; elsewhere they load one after another, with the same
  results. No execute runs beside the loads (as for one load). Each model keeps its own load
  timeout, priority, graph and errors; with spill-fill sharing on (the runtime option
  `spill_fill_sharing: true`; off by default), the models share one buffer sized by the
  largest (its model is created first, alone).

  Each source is what `load_model/2` takes, or `{source, options}` with options of its own.

  Each model is accounted for as `load_model/2` would account for it: its own
  `[:hexagon_tpu, :load, ...]` span (with `:list_index`, `:list_size`; the list call's
  duration) and `[:hexagon_tpu, :error]` when it failed (`HexagonTpu.Telemetry`), and its load
  time and first answer in `HexagonTpu.Stats.boot/0`.

  ## Options

  `load_model/2`'s: the runtime options or `:runtime` (for all the models), and the model
  options (`:graph`, `:scheduler`, `:timeout`, `:priority`, `:queue_limit`, `:memory_limit_mb`,
  `:mapping`, `:profile_every`, `:profile_level`) as defaults each model's own override.
  The runtime options and `:runtime` are the call's alone (all the models load into one
  runtime): in a model's own options they are an `:invalid_option` error saying so.
  A bad option or source is an `{:error, error}` for the whole call, before anything loads.

  ## Examples

      iex> {:ok, [{:ok, add}, {:ok, scale}, {:error, missing}]} =
      ...>   HexagonTpu.load_models(
      ...>     ["add.bin", {{:binary, File.read!("add.bin")}, graph: "scale_u8"}, "missing.bin"],
      ...>     backend: :reference, graph: "add_f32")
      iex> {add.name, scale.name, missing.reason}
      {"add_f32", "scale_u8", :io}
      iex> Enum.each([add, scale], &HexagonTpu.close/1)
      :ok
  """
  @spec load_models([Context.source() | {Context.source(), keyword()}], keyword()) ::
          {:ok, [{:ok, model()} | {:error, Error.t()}]} | {:error, Error.t()}
  def load_models(sources, opts \\ []), do: HexagonTpu.Models.Load.load_models(sources, opts)

  @doc """
  Like `load_models/2`, but all or nothing: the models, or the first error raised as
  `HexagonTpu.Error` (the models that did load are closed first).

  ## Examples

      iex> [add, scale] = HexagonTpu.load_models!([{"add.bin", graph: "add_f32"},
      ...>   {"add.bin", graph: "scale_u8"}], backend: :reference)
      iex> {add.name, scale.name}
      {"add_f32", "scale_u8"}
      iex> Enum.each([add, scale], &HexagonTpu.close/1)
      :ok
  """
  @spec load_models!([Context.source() | {Context.source(), keyword()}], keyword()) :: [model()]
  def load_models!(sources, opts \\ []), do: HexagonTpu.Models.Load.load_models!(sources, opts)

  @doc """
  Profiles `model` on `inputs`: `:runs` executes (10) with a QNN profile of `:level`
  (`:detailed`), summarized as a `HexagonTpu.Profile` (per op the median and minimum of its
  time and cycles and its share of the accelerator, heaviest first; the accelerator's, the
  RPC's and the host's figures; the raw events). `HexagonTpu.Profile.write_trace/2` and
  `write_page/3` turn it into a Chrome trace or a page. A level the backend cannot give is an
  `:unsupported` error naming the capability; see [docs/profiling.md](docs/profiling.md).

  ## Options

    * `:level` - `:basic`, `:detailed` (default), `:linting` or `:optrace`
    * `:runs` - how many executes (10; 1 to 100000, and runs x ops at most 16,777,216)
    * `:max_events` - events read per execute (4096); past it the profile says "truncated"
    * `:timeout`, `:priority` - each execute's, as `predict/3`'s (default: the model's)

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> a = <<1.0::float-32-native, 2.0::float-32-native, 3.0::float-32-native, 4.0::float-32-native>>
      iex> {:ok, profile} = HexagonTpu.profile(model, [a, a], runs: 3)
      iex> {profile.level, profile.runs, Enum.map(profile.ops, & &1.name)}
      {:detailed, 3, ["ElementWiseAdd_0"]}
      iex> {:error, error} = HexagonTpu.profile(model, [a, a], level: :fast)
      iex> error.message
      "HexagonTpu.profile/3: expected :level to be :basic, :detailed, :linting or :optrace, got :fast"
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec profile(model(), [Graph.input()], keyword()) ::
          {:ok, HexagonTpu.Profile.t()} | {:error, Error.t()}
  def profile(model, inputs, opts \\ []), do: HexagonTpu.Profile.run(model, inputs, opts)

  @doc """
  Like `profile/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> a = <<0::size(128)>>
      iex> HexagonTpu.profile!(model, [a, a], level: :basic, runs: 1).ops
      []
      iex> HexagonTpu.profile!(model, [a])
      ** (HexagonTpu.Error) mismatch: graph 'add_f32' expects 2 input(s) (a, b), got 1
  """
  @spec profile!(model(), [Graph.input()], keyword()) :: HexagonTpu.Profile.t()
  def profile!(model, inputs, opts \\ []), do: Error.unwrap!(profile(model, inputs, opts))

  @doc """
  Like `load_model/2`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> HexagonTpu.close(model)
      :ok

      iex> HexagonTpu.load_model!("missing.bin", backend: :reference)
      ** (HexagonTpu.Error) io: cannot open 'missing.bin': No such file or directory
  """
  @spec load_model!(Context.source(), keyword()) :: model()
  def load_model!(source, opts \\ []), do: Error.unwrap!(load_model(source, opts))

  @doc """
  Runs the model once on a list of inputs (in input order); returns the outputs in output
  order.

  `inputs` may also be a `HexagonTpu.SharedIO` from `alloc_io/1` whose inputs were written:
  the call runs in place and returns `{:ok, io}`; read the outputs from `io`.

  ## Options

  `:quantize`, `:dequantize`, `:output`, `:stats`, `:perf_profile` (e.g.
  `perf_profile: :burst` for this call only) and `:scheduler` (`:auto`, `:async` or
  `:normal`, overriding the model's; `:normal` is a preference that falls back to a submitted
  call when the call would wait): see `HexagonTpu.Graph.execute/3`.

    * `:timeout` - the call's deadline in milliseconds from its start (a positive integer, or
      `:infinity`: 24 h); default the model's (`load_model/2`), else 60 s. Past it the call
      returns a `:timeout` error naming the graph and the limit: a waiting call is dropped, a
      running one aborted (backends with execute signals) or abandoned to finish in the
      background with its result discarded (backends without); the model stays usable
    * `:priority` - `:low`, `:normal`, `:normal_high` or `:high`: the call's place among the
      calls waiting for the model (higher first, then arrival; a waiting call rises one level
      for every 4 later calls that pass it, so none waits forever); default the model's

  A call that is not short (see `HexagonTpu.Graph.execute/3`'s `:scheduler`) is submitted to
  the model's worker thread and its answer awaited as a message, as `predict_async/3` and
  `await/2` do: no scheduler waits while the NPU computes.

  Any number of concurrent callers wait their turn (the model's queue has no limit but memory,
  unless `load_model/2`'s `:queue_limit` sets one: then one call more is a `:busy` error naming
  it). The deadline holds at every wait: the model's queue, the execute gate while another
  model loads (or the DSP recovers) and a recovery this call runs.

  ## Examples

  f32 in, f32 out, through the u8 graph (16 saturates at 12.7 in the output's range):

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> x = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> {:ok, [y]} = HexagonTpu.predict(model, [x], output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [1.0, 4.0, 9.0, 12.699999809265137]
      iex> HexagonTpu.close(model)
      :ok

  Inputs are checked against the graph:

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:error, error} = HexagonTpu.predict(model, [<<0::128>>])
      iex> {error.reason, error.message}
      {:mismatch, "graph 'add_f32' expects 2 input(s) (a, b), got 1"}
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec predict(model(), [Graph.input()] | HexagonTpu.SharedIO.t(), keyword()) ::
          {:ok, [Graph.output()] | HexagonTpu.SharedIO.t()}
          | {:ok, [Graph.output()] | HexagonTpu.SharedIO.t(), map()}
          | {:error, Error.t()}
  def predict(model, inputs, opts \\ []), do: Graph.execute(model, inputs, opts)

  @doc """
  Submits one call of the model and returns at once with a `HexagonTpu.Call`; `await/2` gives
  its result, as `predict/3` would have. The call waits in the model's queue (by `:priority`,
  then arrival) and runs on the model's worker thread in the C core; its answer comes back to
  the calling process as a message, which only `await/2` in this process receives. Submit
  several to keep the NPU busy while the next inputs are prepared (`stream/3` does that).

  Errors found at once (options, inputs, a closed model, a full queue: `:busy`, the model's
  queue holds 256 calls) are returned here; the rest by `await/2`. If the calling process
  exits, its calls are cancelled.

  ## Options

  As `predict/3` (`:quantize`, `:dequantize`, `:output`, `:stats`, `:perf_profile`, `:timeout`,
  `:priority`) but `:scheduler`; inputs are a list (not a `HexagonTpu.SharedIO`, nor
  vectorized tensors).

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> a = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> {:ok, call} = HexagonTpu.predict_async(model, [a, a], output: :binary, priority: :high)
      iex> {:ok, [y]} = HexagonTpu.await(call)
      iex> for <<v::float-32-native <- y>>, do: v
      [2.0, 4.0, 6.0, 8.0]
      iex> {:error, error} = HexagonTpu.predict_async(model, [a, a], timeout: 0)
      iex> error.message
      "HexagonTpu.predict_async/3: expected :timeout to be a positive integer (milliseconds, at most 86400000, 24 h) or :infinity, got 0"
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec predict_async(model(), [Graph.input()], keyword()) ::
          {:ok, HexagonTpu.Call.t()} | {:error, Error.t()}
  def predict_async(model, inputs, opts \\ []), do: HexagonTpu.Call.submit(model, inputs, opts)

  @doc """
  Waits for the answer of a call from `predict_async/3` and returns it as `predict/3` would
  (`{:ok, outputs}`, `{:ok, outputs, stats}` with `stats: true`, or `{:error, error}`).

  `timeout` (milliseconds or `:infinity`) bounds this wait only (the call's own deadline is its
  `:timeout` option): when it passes, the call is cancelled and `{:error, %HexagonTpu.Error{
  reason: :timeout}}` returned; an answer that had already arrived is returned instead, and no
  message is left behind either way. Only the process that submitted the call can await it,
  once: another process, or a second await, gets an `:invalid_argument` error.

  Emits the `[:hexagon_tpu, :execute, ...]` telemetry events around the wait, as `predict/3`
  does around its call (`:scheduler` is `:async`).

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, call} = HexagonTpu.predict_async(model, [<<0::128>>, <<0::128>>], output: :binary)
      iex> {:ok, [_y]} = HexagonTpu.await(call, 5_000)
      iex> {:error, error} = HexagonTpu.await(call)
      iex> error.message
      "HexagonTpu.await/2: the call was already awaited (a call's answer is received once)"
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec await(HexagonTpu.Call.t(), timeout()) ::
          {:ok, [Graph.output()]} | {:ok, [Graph.output()], map()} | {:error, Error.t()}
  def await(call, timeout \\ :infinity), do: HexagonTpu.Call.await(call, timeout)

  @doc """
  Runs the model over `enumerable` (each element a list of inputs, as `predict/3` takes),
  lazily, with up to `:in_flight` calls submitted ahead of the one awaited, so the next inputs
  are converted and queued while the current one executes. Each element of the stream is what
  `predict/3` returns for the corresponding input, in input order: `{:ok, outputs}` (or with
  stats) or `{:error, error}`; an error does not stop the stream. When the consumer stops early
  (`Enum.take/2`, a raise), the calls still in flight are cancelled and their answers dropped.
  Consume the stream in one process (the calls' answers go to it).

  ## Options

    * `:in_flight` - calls in flight at most (default 2); a non-positive value raises
      `ArgumentError` when the stream starts
    * every option of `predict_async/3`, applied to each call

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> row = fn v -> for x <- [v, v, v, v], into: <<>>, do: <<x::float-32-native>> end
      iex> inputs = Enum.map(1..5, fn i -> [row.(i * 1.0), row.(0.0)] end)
      iex> results = HexagonTpu.stream(model, inputs, in_flight: 3, output: :binary) |> Enum.to_list()
      iex> for {:ok, [<<v::float-32-native, _::binary>>]} <- results, do: v
      [1.0, 2.0, 3.0, 4.0, 5.0]
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec stream(model(), Enumerable.t(), keyword()) :: Enumerable.t()
  def stream(model, enumerable, opts \\ []), do: HexagonTpu.Call.stream(model, enumerable, opts)

  @doc """
  Like `predict/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> a = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> [y] = HexagonTpu.predict!(model, [a, a], output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [2.0, 4.0, 6.0, 8.0]
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec predict!(model(), [Graph.input()] | HexagonTpu.SharedIO.t(), keyword()) ::
          [Graph.output()]
          | {[Graph.output()], map()}
          | HexagonTpu.SharedIO.t()
          | {HexagonTpu.SharedIO.t(), map()}
  def predict!(model, inputs, opts \\ []), do: Graph.execute!(model, inputs, opts)

  @doc """
  Runs the model on a batch of N rows, in chunks of the graph's own batch; returns the outputs
  with N rows.

  A graph's batch B is the leading dimension its inputs and outputs share (`[1, 64]`: 1). Each
  input holds N rows of the graph's shape: an Nx tensor of shape `{n, ...}` (the rest of the
  graph's shape), or a binary of a whole number of rows (f32, or the tensor's own type with
  `quantize: :none`); every input the same N. The rows run in chunks of B (all of them in
  one execute where the graph takes a batch multiple, see below), the last chunk padded with
  zero rows when N is not a multiple of B; each output comes back with N rows (padding
  removed): an Nx tensor of shape `{n, ...}` or a binary of N rows. So a model
  compiled for batch 1 serves a batch of 64 images in one call, and `HexagonTpu.Serving`
  batches concurrent requests through it.

  Inputs are read and converted once for the whole batch (one `Nx.to_binary/1`, and one
  `Nx.as_type/2` for another float type as in `predict/3`) and handed to the NIF whole (copied
  once only when N rows need padding). The batch goes on the model's queue as submitted calls
  whose answers come back as messages (as `predict_async/3`): no scheduler, normal or dirty,
  waits while the NPU computes. Where the backend announces batch multiples (every HTP
  release does) and the graph takes one, the batch is ONE call and ONE execute whose batch
  dimension is the chunks times the graph's (one DSP round trip instead of one per chunk); a
  graph that refuses it gets one call per chunk, up to 4 in flight, their answers taken in
  chunk order (the model's other calls interleave), and the refusal is remembered while the
  graph is open ([docs/elixir.md, "Batch multiple"](docs/elixir.md#batch-multiple)). Either way each chunk's results land in
  its part of one output binary. `:timeout` bounds the whole batch (each chunk is submitted
  with what is left of it) and `:priority` places every chunk in the model's queue, as for
  `predict/3`; `scheduler: :dirty_io` (without either) runs the batch as one call on a dirty
  IO scheduler instead. A sampled batch (`:profile_every`) takes the same path, its (first)
  call carrying the profile. The call is one telemetry span whose
  metadata adds `:batch_size` (N) and `:chunks`; its figures are the call's. A shape error
  names the expected shape and the one given (`expected shape {n, 64} (n >= 1 rows of the
  graph's {1, 64}), got {3, 65}`); a graph whose tensors do not share a leading dimension
  cannot be batched (`:invalid_argument`). An error of one chunk (its conversion, or its
  execute when chunked) names its rows; one of the single execute is the whole batch's.
  Vectorized tensors are refused (`predict/3` takes them).

  Options as `predict/3`; with `stats: true` the figures cover every chunk, `:chunks` is
  their count and `:executes` the graphExecute calls made (1 with a batch multiple, `:chunks`
  without, one more when the graph refused it in this call). `:scheduler` is accepted and
  ignored: a batch always runs on dirty IO.

  ## Examples

  Three rows through the batch-1 graph `add_f32`, as binaries of three rows each:

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> rows = fn values -> for v <- values, into: <<>>, do: <<v::float-32-native>> end
      iex> a = rows.(Enum.map(1..12, &(&1 * 1.0)))
      iex> b = rows.(List.duplicate(100.0, 12))
      iex> {:ok, [y], stats} = HexagonTpu.predict_batch(model, [a, b], output: :binary, stats: true)
      iex> {for(<<v::float-32-native <- y>>, do: v), stats.chunks, stats.executes}
      {[101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0], 3, 1}
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec predict_batch(model(), [Graph.input()], keyword()) ::
          {:ok, [Graph.output()]} | {:ok, [Graph.output()], map()} | {:error, Error.t()}
  def predict_batch(model, inputs, opts \\ []),
    do: HexagonTpu.Batching.predict_batch(model, inputs, opts)

  @doc """
  Like `predict_batch/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> HexagonTpu.predict_batch!(model, [<<0::size(32)-unit(8)>>, <<0::size(16)-unit(8)>>])
      ** (HexagonTpu.Error) mismatch: HexagonTpu.predict_batch/3: graph 'add_f32': the inputs have different numbers of rows: 'a' 2, 'b' 1
  """
  @spec predict_batch!(model(), [Graph.input()], keyword()) ::
          [Graph.output()] | {[Graph.output()], map()}
  def predict_batch!(model, inputs, opts \\ []) do
    case predict_batch(model, inputs, opts) do
      {:ok, outputs} -> outputs
      {:ok, outputs, stats} -> {outputs, stats}
      {:error, error} -> raise error
    end
  end

  @doc """
  Zero-copy input/output buffers for the model: see `HexagonTpu.Graph.alloc_io/1`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> {:ok, io} = HexagonTpu.alloc_io(model)
      iex> a = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> :ok = HexagonTpu.SharedIO.write_inputs(io, [a, a])
      iex> {:ok, ^io} = HexagonTpu.predict(model, io)
      iex> {:ok, y} = HexagonTpu.SharedIO.read_output(io, 0, output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [2.0, 4.0, 6.0, 8.0]
      iex> HexagonTpu.SharedIO.close(io)
      :ok
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec alloc_io(model()) :: {:ok, HexagonTpu.SharedIO.t()} | {:error, Error.t()}
  def alloc_io(model), do: Graph.alloc_io(model)

  @doc """
  Closes the model now instead of at garbage collection. Idempotent; a later call on the
  model is a `:closed` error.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> HexagonTpu.close(model)
      :ok
      iex> HexagonTpu.close(model)
      :ok
      iex> {:error, error} = HexagonTpu.predict(model, [<<0::128>>, <<0::128>>])
      iex> error.reason
      :closed
  """
  @spec close(model()) :: :ok
  def close(model), do: Graph.close(model)

  @doc """
  Closes every runtime, model and `HexagonTpu.SharedIO` this node still has open, and waits
  for the QNN frees. For the way down: hexagon_tpu does it itself when an `elixir`/`mix run`
  script ends and when its application stops (`System.stop/0`, a release's shutdown), so a
  program needs it only before an abrupt `System.halt/1`.

  Every process is garbage-collected first, so what the program dropped is freed as usual;
  what is still referenced is then closed as `close/1` would close it: later calls on it get
  `:closed` errors, and a zero-copy output binary keeps its buffer's memory until it is itself
  collected. A call in progress finishes first (its frees follow when it ends).

  Returns `:ok`, or `{:error, %HexagonTpu.Error{reason: :busy}}` when the frees had not
  finished after 5 s (a wedged DSP): they go on in the background.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> HexagonTpu.close_all()
      :ok
      iex> {:error, error} = HexagonTpu.predict(model, [<<0::128>>, <<0::128>>])
      iex> error.reason
      :closed
  """
  @spec close_all() :: :ok | {:error, Error.t()}
  def close_all, do: HexagonTpu.Shutdown.close_all()

  @doc """
  The C library's process-wide counters (`htpu_stats_get`): `:live_runtimes`,
  `:live_contexts`, `:live_graphs`, `:executes`, `:execute_errors`, `:execute_ns_total`,
  `:execute_ns_last`, `:loads`, `:load_ns_total`, `:quantize_ns_total`,
  `:dequantize_ns_total`, `:recoveries`, `:recovery_failures`, `:live_shared_buffers`,
  `:mem_registrations`, `:startup_retries`, `:executes_in_flight`, `:executes_waiting`,
  `:executes_cancelled`, `:executes_declined`, `:batch_multiple_executes` (single executes of
  a whole batch, `predict_batch/3`), `:batch_multiple_refusals` (graphs that refused one: their
  batches then run chunk by chunk); the NIF's reaper: `:reaper_queued` (handles
  dropped by GC), `:reaper_closed`, `:reaper_inline`; and where executes ran:
  `:executes_normal`, `:executes_dirty_io`, `:normal_declined_busy`,
  `:normal_declined_not_short`, `:normal_declined_resource`, `:normal_declined_other` (see
  `HexagonTpu.Stats.native/0`).

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> before = HexagonTpu.stats().executes
      iex> {:ok, _} = HexagonTpu.predict(model, [<<0::128>>, <<0::128>>], output: :binary)
      iex> HexagonTpu.stats().executes - before
      1
      iex> HexagonTpu.close(model)
      :ok
  """
  @spec stats() :: %{atom() => non_neg_integer()}
  def stats, do: NIF.stats()
end
