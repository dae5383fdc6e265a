defmodule HexagonTpu.Serving do
  @moduledoc """
  A model as an `Nx.Serving`: concurrent requests batched, run on the model through
  `HexagonTpu.predict_batch/3` (executes on the dirty IO schedulers), and the results split
  back to each caller. Needs Nx (`Nx.Serving` is part of Nx); without it, making a serving
  raises a `HexagonTpu.Error` that says so.

      serving = HexagonTpu.Serving.new("/data/digits.bin", batch_size: 64, batch_timeout: 2)

      # inline, in the calling process
      [scores] = Nx.Serving.run(serving, [image])

      # as a process in the supervision tree: requests from many processes are batched
      children = [{Nx.Serving, serving: serving, name: Digits}]
      [scores] = Nx.Serving.batched_run(Digits, [image])
      {:ok, [scores]} = HexagonTpu.Serving.batched_run(Digits, [image])

  A request is a list of inputs in graph-input order (a single input may be given alone), each
  an Nx tensor or a binary holding one or more rows of the graph's shape (`{n, ...}`, see
  `HexagonTpu.predict_batch/3`), or an `Nx.Batch` (`Nx.Batch.stack([image1, image2])`; for a
  graph of several inputs, entries that are tuples in graph-input order or maps keyed by input
  name, `%{"a" => a1, "b" => b1}`, matched by name; or a list with a batch per input); the
  answer is the list of outputs, each with the request's rows. `batch_size` counts rows: up to
  that many rows of concurrent requests are run as one
  batch, in chunks of the graph's own batch, which run as one execute where the graph takes a
  batch multiple ([docs/serving.md](docs/serving.md)). A request of more rows is refused (`:too_large`);
  `batched_run/3` splits it itself.

  Whatever the batching does with a request's rows (Nx.Serving splits a request that does not
  fit in what is left of a batch over two batches, which may run on different partitions), the
  request gets all its rows back in its own order, or the error of its first failed row: each
  row carries its index in the request through the batch and back ([docs/serving.md](docs/serving.md), "What
  a caller is guaranteed").

  Each request is checked in its caller before it is batched (`client_preprocessing`): a wrong
  count, shape or type raises a `HexagonTpu.Error` (`:mismatch`) in that caller alone, and the
  other requests run. A batch that fails with `:nan` (an f32 input holding NaN, which cannot be
  quantized) runs again request by request, so only the requests holding one get the error.
  Any other execute that fails fails its batch: each of its callers gets the
  `HexagonTpu.Error` raised (not a crash of the serving). `batched_run/3` returns these as
  `{:error, %HexagonTpu.Error{}}`, and also a serving that is not running or whose node went
  down (after retrying on the other nodes that serve the name).

  Across nodes, `Nx.Serving.batched_run/2` on a node without the serving sends the request to
  a node that runs it (`:pg`, Nx.Serving's distribution); see [docs/serving.md](docs/serving.md).

  Telemetry: Nx.Serving's `[:nx, :serving, :execute | :preprocessing | :postprocessing, ...]`
  events (the execute's metadata holds this module's `%{batch_size: rows, partition: i}`), for
  each batch one `[:hexagon_tpu, :execute, ...]` span with `:batch_size` and `:chunks` in its
  metadata, and the serving's queue: `[:hexagon_tpu, :serving, :queue]` each time a request is
  queued, a batch handed to a partition or finished, with the rows waiting (`:queue_length`)
  and running (`HexagonTpu.Telemetry`, [docs/serving.md](docs/serving.md)).
  """

  alias HexagonTpu.{Batching, Error, Graph, NxTensors, Options, Results, Runtime}
  alias HexagonTpu.Graph.CallOptions
  alias HexagonTpu.Serving.{BatchStack, Client, Queue, Request, RowTags}

  @compile {:no_warn_undefined, [Nx, Nx.Serving, Nx.Defn.Evaluator]}

  # Nx is optional and not a compile-time dependency: the behaviour is declared when Nx.Serving
  # is there to check the callbacks against (the build with Nx); without it a declared
  # behaviour would be an "undefined behaviour" warning, and the callbacks are the same.
  @nx_serving Code.ensure_loaded?(Nx.Serving)
  if @nx_serving, do: @behaviour(Nx.Serving)

  @where "HexagonTpu.Serving.new/2"

  @spec_opts %{
    partitions: {&__MODULE__.pos_integer?/1, "a positive integer", 1},
    batch_size: {&__MODULE__.pos_integer?/1, "a positive integer", 64},
    batch_timeout: {:non_neg_integer, "a non-negative integer (milliseconds)", 2},
    distribution_weight: {&__MODULE__.pos_integer?/1, "a positive integer", 1},
    shutdown: {:non_neg_integer, "a non-negative integer (milliseconds)", 30_000},
    quantize: {{:one_of, [:auto, :none]}, ":auto or :none", :auto},
    dequantize: {{:one_of, [:auto, :none]}, ":auto or :none", :auto},
    output: {{:one_of, [:nx, :binary]}, ":nx or :binary", :nx},
    timeout: {&CallOptions.check_timeout/1, "", nil},
    priority: {{:one_of, CallOptions.priorities()}, CallOptions.priorities_expected(), nil},
    perf_profile: {{:one_of, Runtime.Perf.names()}, Runtime.Perf.expected(), nil}
  }

  @doc false
  def pos_integer?(v), do: is_integer(v) and v > 0

  @typedoc "What the serving runs: a model, a list of models (one per partition) or a source."
  @type model_or_source :: Graph.t() | [Graph.t()] | HexagonTpu.Context.source()

  @doc """
  Returns an `Nx.Serving` (a struct to `Nx.Serving.run/2`, or to start with `{Nx.Serving,
  serving: serving, name: Name}`) that runs `model_or_path`.

  `model_or_path` is a loaded model (`HexagonTpu.load_model/2`), a list of loaded models of
  the same inputs and outputs (one partition each: e.g. graphs of several contexts), or what
  `HexagonTpu.load_model/2` loads (a path, `{:file, path}`, `{:binary, bytes}`), loaded here,
  once per partition.

  ## Options

    * `:batch_size` - rows per batch (64); a request of more rows is refused (`:too_large`):
      `batched_run/3` splits it into requests of at most this many rows
    * `:batch_timeout` - milliseconds a batch waits for more requests once it has one (2);
      `0` batches what has arrived by the time the serving looks
    * `:partitions` - copies of the model loaded from the source (1), each a partition that
      runs batches concurrently with the others (a model runs one execute at a time). With
      loaded models, the partitions are the list given
    * `:distribution_weight`, `:shutdown` - as `Nx.Serving.start_link/1`
    * `:quantize` - `:auto` (requests are float tensors or f32 binaries; other float types
      are converted to f32 in the caller) or `:none` (requests in each input's own type)
    * `:dequantize` - as `HexagonTpu.predict/3`
    * `:output` - `:nx` (default) or `:binary`: what callers get
    * `:perf_profile` - voted for each execute, as in `HexagonTpu.predict/3`
    * `:timeout` - each batch's deadline in milliseconds (a positive integer, or `:infinity`),
      as `HexagonTpu.predict_batch/3`'s: past it the batch's callers get a `:timeout` error;
      default the model's (`HexagonTpu.load_model/2`), else 60 s. Not the callers' own wait,
      which is `batched_run/3`'s `:timeout`
    * `:priority` - `:low`, `:normal`, `:normal_high` or `:high`: the place of the serving's
      batches among the calls waiting for the model, as `HexagonTpu.predict_batch/3`'s (a
      `:high` serving's batches go before a `:low` one's on a model they share); default the
      model's. A source loaded here gets it as its load's `:priority` too (the context's QNN
      priority where the backend has priority control)
    * `:graph` and the runtime options (`backend: :reference`, ...) - for loading a source,
      as `HexagonTpu.load_model/2`
    * `:profile_every`, `:profile_level` - for loading a source: one batch in N carries a
      profile (of its first chunk) and emits `[:hexagon_tpu, :profile]` telemetry, as
      `HexagonTpu.load_model/2`'s

  Raises `HexagonTpu.Error` on bad options, a model that cannot be batched or cannot be
  loaded, and when Nx is not loaded.

  ## Examples

  (`add.bin`: see "The examples" in `HexagonTpu`.) Inline, one request of a row per input,
  then the same as an `Nx.Batch` of two rows:

      iex> serving = HexagonTpu.Serving.new("add.bin", backend: :reference, graph: "add_f32")
      iex> a = Nx.tensor([[1.0, 2.0, 3.0, 4.0]])
      iex> [y] = Nx.Serving.run(serving, [a, a])
      iex> Nx.to_flat_list(y)
      [2.0, 4.0, 6.0, 8.0]
      iex> row = Nx.tensor([1.0, 2.0, 3.0, 4.0])
      iex> batch = Nx.Batch.stack([{row, row}, {row, Nx.multiply(row, 10)}])
      iex> [y] = Nx.Serving.run(serving, batch)
      iex> Nx.to_list(y)
      [[2.0, 4.0, 6.0, 8.0], [11.0, 22.0, 33.0, 44.0]]

  A request that does not fit the graph is refused in its caller:

      iex> serving = HexagonTpu.Serving.new("add.bin", backend: :reference, graph: "add_f32")
      iex> Nx.Serving.run(serving, [Nx.iota({1, 4}, type: :f32)])
      ** (HexagonTpu.Error) mismatch: HexagonTpu.Serving: graph 'add_f32' expects 2 input(s) (a, b), got 1
  """
  @spec new(model_or_source(), keyword()) :: struct()
  def new(model_or_path, opts \\ []) do
    if !NxTensors.usable?() do
      raise Error.new(
              :unsupported,
              "#{@where}: Nx is not loaded (or the :nx application not started): " <>
                "Nx.Serving is part of Nx; add {:nx, \"~> 0.7\"} to your project's deps"
            )
    end

    load_names = [:graph, :profile_every, :profile_level | Runtime.option_names() -- [:env]]
    {load_opts, own} = Options.split(opts, load_names)
    o = Error.unwrap!(Options.validate(own, @spec_opts, @where))
    models = Error.unwrap!(models(model_or_path, load_opts, o))
    [first | _] = models
    batch = Error.unwrap!(Batching.graph_batch(first))

    spec = %{
      graph: first.name,
      inputs: first.inputs,
      outputs: first.outputs,
      batch: batch,
      quantize: o.quantize,
      dequantize: o.dequantize,
      batch_size: o.batch_size,
      layout: BatchStack.layout()
    }

    spec = Map.put(spec, :check, Request.check(spec))

    queue = Queue.new()

    arg =
      Map.merge(spec, %{
        models: models,
        perf_profile: o.perf_profile,
        timeout: o.timeout,
        priority: o.priority,
        queue: queue
      })

    output = o.output
    partitions = length(models)

    # Nx.Serving asks the defn compiler how many partitions to run; the evaluator's answer is
    # :max_concurrency copies of these options, one per model here.
    Nx.Serving.new(__MODULE__, arg, compiler: Nx.Defn.Evaluator, max_concurrency: partitions)
    |> Nx.Serving.process_options(
      batch_size: o.batch_size,
      batch_timeout: o.batch_timeout,
      partitions: partitions > 1,
      distribution_weight: o.distribution_weight,
      shutdown: o.shutdown
    )
    |> Nx.Serving.client_preprocessing(fn input ->
      {_batch, rows} = request = Request.preprocess(spec, input)
      :ok = Queue.request(queue, spec.graph, rows)
      request
    end)
    |> Nx.Serving.client_postprocessing(fn result, rows ->
      Request.postprocess(result, rows, spec.graph, output)
    end)
  end

  defp models(%Graph{} = g, [], 1), do: {:ok, [g]}
  defp models(%Graph{} = g, load_opts, o), do: models([g], load_opts, o)

  defp models([%Graph{} | _] = graphs, load_opts, %{partitions: n}) do
    cond do
      load_opts != [] ->
        bad("load options (#{inspect(Keyword.keys(load_opts))}) apply to a source, not to models")

      n != 1 ->
        bad(
          "partitions: #{n} loads copies from a source (a path or {:binary, bytes}); with " <>
            "loaded models the partitions are the list of models"
        )

      not Enum.all?(graphs, &is_struct(&1, Graph)) ->
        bad("expected a list of %HexagonTpu.Graph{}, got #{inspect(graphs, limit: 5)}")

      true ->
        same_io(graphs)
    end
  end

  # A source loaded here takes the serving's :priority as its context's QNN priority too, as
  # load_model/2's does.
  defp models(source, load_opts, %{partitions: n, priority: priority})
       when is_binary(source) or is_tuple(source) do
    load_opts = if priority, do: [{:priority, priority} | load_opts], else: load_opts
    Results.map_ok(1..n, fn _ -> HexagonTpu.load_model(source, load_opts) end)
  end

  defp models(other, _load_opts, _o),
    do: bad("expected a model, a list of models or a source, got #{inspect(other, limit: 5)}")

  defp same_io([first | rest] = graphs) do
    io = fn g -> Enum.map(g.inputs ++ g.outputs, &{&1.type, &1.shape}) end

    case Enum.find(rest, &(io.(&1) != io.(first))) do
      nil -> {:ok, graphs}
      g -> bad("the models' tensors differ: '#{first.name}' and '#{g.name}'")
    end
  end

  defp bad(message), do: {:error, Error.new(:invalid_argument, "#{@where}: #{message}")}

  @doc """
  `Nx.Serving.batched_run/2`, with errors returned: `{:ok, outputs}`, or `{:error,
  %HexagonTpu.Error{}}` for a bad request (`:mismatch`), a failed execute (the batch's
  error), or no serving answering: `:unavailable` when no node runs `name` or the node
  serving the request went down and `retries` (default 2) further attempts, on the nodes still
  serving it, did not answer either. A request is retried only when its node went down.

  Options:

    * `:retries` - further attempts after the node serving the request went down (2)
    * `:timeout` - milliseconds to wait for the answer, retries and the pieces of a split
      request included (30_000), or `:infinity`; then `{:error, %HexagonTpu.Error{reason:
      :timeout}}`. The request may still run on the serving (its answer is dropped). Without
      a timeout a wedged execute keeps the caller forever, and a serving node that loses power
      or its network is noticed only when the distribution gives it up (`net_ticktime`, 60 s
      by default)

  A request of more rows than the serving's `batch_size` (which `Nx.Serving.batched_run/2`
  refuses with a `:too_large` error) is split here into requests of at most `batch_size` rows,
  run concurrently, and their answers joined in row order; if one of them fails, the request
  fails with the error of the first that failed, its message prefixed with that piece's rows.

  `name` is the serving's name as given to `Nx.Serving.batched_run/2`: an atom, `{:local,
  atom}` or `{:distributed, atom}`; anything else is `{:error, %HexagonTpu.Error{reason:
  :invalid_argument}}`.

  ## Examples

  Five rows through a serving of batches of 2 rows (`add.bin`: see "The examples" in
  `HexagonTpu`):

      iex> serving =
      ...>   HexagonTpu.Serving.new("add.bin", backend: :reference, graph: "add_f32", batch_size: 2)
      iex> children = [{Nx.Serving, serving: serving, name: DocAddServing}]
      iex> {:ok, sup} = Supervisor.start_link(children, strategy: :one_for_one)
      iex> rows = Nx.iota({5, 4}, type: :f32)
      iex> {:ok, [y]} = HexagonTpu.Serving.batched_run(DocAddServing, [rows, rows])
      iex> Nx.to_flat_list(y) == Nx.to_flat_list(Nx.multiply(rows, 2))
      true
      iex> {:error, error} = HexagonTpu.Serving.batched_run(NoSuchServing, [rows, rows])
      iex> error.reason
      :unavailable
      iex> Supervisor.stop(sup)
      :ok
  """
  @spec batched_run(atom() | {:local | :distributed, atom()}, term(), keyword()) ::
          {:ok, list()} | {:error, Error.t()}
  def batched_run(name, input, opts \\ []), do: Client.batched_run(name, input, opts)

  # ---- the Nx.Serving callbacks, in the serving ------------------------------------------------

  @doc false
  if @nx_serving, do: @impl(true)
  # Nx.Serving's init/3: one model per partition (the partitions' options are not used). A
  # serving process keeps the errors of failed batches for the callers of split requests
  # (RowTags); an inline run (Nx.Serving.run/2) never splits a request, so needs none.
  def init(type, arg, partitions) do
    %{models: models} = arg
    count = length(models)

    by_partition =
      for i <- 0..(length(partitions) - 1), into: %{}, do: {i, Enum.at(models, rem(i, count))}

    table = if type == :process, do: RowTags.new_table()
    if type == :process, do: Queue.reset(arg.queue, arg.graph)
    {:ok, Map.merge(arg, %{by_partition: by_partition, errors_table: table})}
  end

  @doc false
  if @nx_serving, do: @impl(true)
  # Nx.Serving's handle_batch/3: the function run in the serving's task for this batch.
  def handle_batch(batch, partition, state) do
    model = Map.fetch!(state.by_partition, partition)
    %{queue: queue, graph: graph} = state
    :ok = Queue.batch(queue, graph, batch.size, partition)

    {:execute,
     fn ->
       try do
         execute(state, model, partition, batch)
       after
         Queue.done(queue, graph, batch.size, partition)
       end
     end, state}
  end

  # The batch's answer: {outputs, info} (one output alone, several as a tuple; info: each row's
  # RowTags info), and its metadata: %{batch_size:, partition:}, the errors of failed rows by
  # id (:errors) and the serving's error table (:errors_table).
  defp execute(state, model, partition, batch) do
    stack = BatchStack.requests(batch, length(state.inputs) + 1, state.layout)
    {inputs, tags, requests} = batch_inputs(batch, stack)
    meta = %{batch_size: batch.size, partition: partition, errors_table: state.errors_table}

    opts = [quantize: state.quantize, dequantize: state.dequantize, output: :nx]
    opts = if state.perf_profile, do: [perf_profile: state.perf_profile] ++ opts, else: opts
    # the serving's deadline and place in the model's queue, for each batch (nil: the model's)
    opts = for(k <- [:timeout, :priority], v = Map.get(state, k), do: {k, v}) ++ opts

    case Batching.predict_batch(model, inputs, opts) do
      {:ok, outputs} ->
        {answer(outputs, tags), meta}

      # A NaN is one request's input, not the batch's: each request runs again alone, so that
      # only the requests holding one get an error (naming their own rows), and the others
      # their results. Only when the batch failed: the good path pays nothing.
      {:error, %Error{reason: :nan}} when is_list(requests) and length(requests) > 1 ->
        one_by_one(state, model, requests, opts, meta)

      # Every row of the batch carries the error (raised by postprocess/4 in each caller); the
      # outputs are placeholders of the right shape, which Nx.Serving slices per caller.
      {:error, e} ->
        {id, errors} = RowTags.put_error(state.errors_table, %{}, e)
        rows = byte_size(tags) |> div(8)

        {answer(placeholders(state, rows), RowTags.failed(tags, id)), with_errors(meta, errors)}
    end
  end

  defp one_by_one(state, model, requests, opts, meta) do
    {parts, {infos, errors}} =
      Enum.map_reduce(requests, {[], %{}}, fn {bins, tags, rows}, {infos, errors} ->
        case Batching.predict_batch(model, bins, opts) do
          {:ok, outputs} ->
            {outputs, {[tags | infos], errors}}

          {:error, e} ->
            {id, errors} = RowTags.put_error(state.errors_table, errors, e)
            {placeholders(state, rows), {[RowTags.failed(tags, id) | infos], errors}}
        end
      end)

    outputs = Enum.zip_with(parts, &Nx.concatenate/1)
    info = infos |> Enum.reverse() |> IO.iodata_to_binary()
    {answer(outputs, info), with_errors(meta, errors)}
  end

  # An inline run's errors travel in the metadata; a serving process's are in its table.
  defp with_errors(meta, errors) when map_size(errors) == 0, do: meta
  defp with_errors(meta, errors), do: Map.put(meta, :errors, errors)

  # What Nx.Serving slices for each caller: the outputs (one alone: one container level less
  # in every caller's slicing; several as a tuple) and the rows' info.
  defp answer([output], info), do: {output, info_tensor(info)}
  defp answer(outputs, info), do: {List.to_tuple(outputs), info_tensor(info)}

  defp info_tensor(bin), do: Nx.from_binary(bin, {:s, 64})

  # The batch's rows, one entry per input, and the rows' tags: binaries joined from the
  # requests when the batch can be read request by request (the common case, BatchStack),
  # else the tensors of Nx's traversal; and the requests, each {input binaries, tags, rows}
  # (for one_by_one/5), or :error.
  defp batch_inputs(_batch, {:ok, requests}) do
    split =
      for {tensors, rows} <- requests do
        {inputs, [tags]} = tensors |> Enum.map(&Nx.to_binary/1) |> Enum.split(-1)
        {inputs, tags, rows}
      end

    inputs = split |> Enum.map(&elem(&1, 0)) |> Enum.zip_with(&IO.iodata_to_binary/1)
    tags = split |> Enum.map(&elem(&1, 1)) |> IO.iodata_to_binary()
    {inputs, tags, split}
  end

  defp batch_inputs(batch, :error) do
    {inputs, [tags]} = batch |> BatchStack.traverse() |> Enum.split(-1)
    {inputs, Nx.to_binary(tags), :error}
  end

  defp placeholders(state, rows) do
    for info <- state.outputs do
      type = if state.dequantize == :auto, do: {:f, 32}, else: info.type
      Nx.broadcast(Nx.tensor(0, type: type), put_elem(info.shape, 0, rows))
    end
  end
end
