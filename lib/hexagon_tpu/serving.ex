defmodule HexagonTpu.Serving do
  @moduledoc """
  A model as an `Nx.Serving`: concurrent requests batched, run on the model through
  `HexagonTpu.predict_batch/3` (executes on the dirty IO schedulers), and the results split
  back to each caller. Needs Nx (`Nx.Serving` is part of Nx); without it `new/2` raises a
  `HexagonTpu.Error` that says so.

      serving = HexagonTpu.Serving.new("/data/digits.bin", batch_size: 64, batch_timeout: 2)

      # inline, in the calling process
      [scores] = Nx.Serving.run(serving, [image])

      # as a process in the supervision tree: requests from many processes are batched
      children = [{Nx.Serving, serving: serving, name: Digits}]
      [scores] = Nx.Serving.batched_run(Digits, [image])
      {:ok, [scores]} = HexagonTpu.Serving.batched_run(Digits, [image])

  A request is a list of inputs in graph-input order (a single input may be given alone), each
  an Nx tensor or a binary holding one or more rows of the graph's shape (`{n, ...}`, see
  `HexagonTpu.predict_batch/3`); the answer is the list of outputs, each with the request's
  rows. `batch_size` counts rows: up to that many rows of concurrent requests are run as one
  batch, in chunks of the graph's own batch. A request of more rows is refused (`:too_large`);
  `batched_run/3` splits it itself.

  Whatever the batching does with a request's rows (Nx.Serving splits a request that does not
  fit in what is left of a batch over two batches, which may run on different partitions), the
  request gets all its rows back in its own order, or the error of its first failed row: each
  row carries its index in the request through the batch and back (docs/serving.md, "What a
  caller is guaranteed").

  Each request is checked in its caller before it is batched (`client_preprocessing`): a wrong
  count, shape or type raises a `HexagonTpu.Error` (`:mismatch`) in that caller alone, and the
  other requests run. A batch that fails with `:nan` (an f32 input holding NaN, which cannot be
  quantized) runs again request by request, so only the requests holding one get the error.
  Any other execute that fails fails its batch: each of its callers gets the
  `HexagonTpu.Error` raised (not a crash of the serving). `batched_run/3` returns these as
  `{:error, %HexagonTpu.Error{}}`, and also a serving that is not running or whose node went
  down (after retrying on the other nodes that serve the name).

  Across nodes, `Nx.Serving.batched_run/2` on a node without the serving sends the request to
  a node that runs it (`:pg`, Nx.Serving's distribution); see docs/serving.md.

  Telemetry: Nx.Serving's `[:nx, :serving, :execute | :preprocessing | :postprocessing, ...]`
  events (the execute's metadata holds this module's `%{batch_size: rows, partition: i}`), and
  for each batch one `[:hexagon_tpu, :execute, ...]` span with `:batch_size` and `:chunks` in
  its metadata (`HexagonTpu.Telemetry`).
  """

  alias HexagonTpu.{Batching, Error, Graph, NxTensors, Options, Results, Runtime}
  alias HexagonTpu.Serving.{BatchStack, RowTags}

  @compile {:no_warn_undefined, [Nx, Nx.Serving, Nx.Batch, Nx.LazyContainer, Nx.Defn.Evaluator]}

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
    perf_profile:
      {{:one_of, Runtime.perf_profiles()},
       "one of " <> Enum.map_join(Runtime.perf_profiles(), ", ", &inspect/1), nil}
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
    * `:graph` and the runtime options (`backend: :reference`, ...) - for loading a source,
      as `HexagonTpu.load_model/2`

  Raises `HexagonTpu.Error` on bad options, a model that cannot be batched or cannot be
  loaded, and when Nx is not loaded.
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

    load_names = [:graph | Runtime.option_names() -- [:env]]
    {load_opts, own} = Options.split(opts, load_names)
    o = HexagonTpu.unwrap!(Options.validate(own, @spec_opts, @where))
    models = HexagonTpu.unwrap!(models(model_or_path, load_opts, o.partitions))
    [first | _] = models
    batch = HexagonTpu.unwrap!(Batching.graph_batch(first))

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

    arg = Map.merge(spec, %{models: models, perf_profile: o.perf_profile})
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
    |> Nx.Serving.client_preprocessing(fn input -> preprocess(spec, input) end)
    |> Nx.Serving.client_postprocessing(fn result, rows ->
      postprocess(result, rows, spec.graph, output)
    end)
  end

  defp models(%Graph{} = g, [], 1), do: {:ok, [g]}
  defp models(%Graph{} = g, load_opts, n), do: models([g], load_opts, n)

  defp models([%Graph{} | _] = graphs, load_opts, n) do
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

  defp models(source, load_opts, n) when is_binary(source) or is_tuple(source) do
    Results.map_ok(1..n, fn _ -> HexagonTpu.load_model(source, load_opts) end)
  end

  defp models(other, _load_opts, _n),
    do: bad("expected a model, a list of models or a source, got #{inspect(other, limit: 5)}")

  defp same_io([first | rest] = graphs) do
    io = fn g -> Enum.map(g.inputs ++ g.outputs, &{&1.type, &1.shape}) end

    case Enum.find(rest, &(io.(&1) != io.(first))) do
      nil -> {:ok, graphs}
      g -> bad("the models' tensors differ: '#{first.name}' and '#{g.name}'")
    end
  end

  defp bad(message), do: {:error, Error.new(:invalid_argument, "#{@where}: #{message}")}

  @run_opts %{
    retries: {:non_neg_integer, "a non-negative integer", 2},
    timeout: {&__MODULE__.timeout?/1, "a positive integer (milliseconds) or :infinity", 30_000}
  }

  @doc false
  def timeout?(v), do: v == :infinity or (is_integer(v) and v > 0)

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
  """
  @spec batched_run(atom() | {:local | :distributed, atom()}, term(), keyword()) ::
          {:ok, list()} | {:error, Error.t()}
  def batched_run(name, input, opts \\ []) do
    with :ok <- check_name(name) do
      run_with(name, input, Options.validate(opts, @run_opts, "HexagonTpu.Serving.batched_run/3"))
    end
  end

  defp check_name(name) when is_atom(name) and name != nil, do: :ok
  defp check_name({scope, name}) when scope in [:local, :distributed] and is_atom(name), do: :ok

  defp check_name(other) do
    {:error,
     Error.new(
       :invalid_argument,
       "HexagonTpu.Serving.batched_run/3: expected the name of an Nx.Serving (an atom, " <>
         "{:local, atom} or {:distributed, atom}), got #{inspect(other, limit: 5)}"
     )}
  end

  defp run_with(name, input, options) do
    case options do
      {:ok, %{retries: retries, timeout: :infinity}} ->
        run_whole(name, input, retries)

      {:ok, %{retries: retries, timeout: timeout}} ->
        with_timeout(name, timeout, fn -> run_whole(name, input, retries) end)

      error ->
        error
    end
  end

  # Nx.Serving.batched_run/2 waits without a timeout, so the request runs in a process of its
  # own, linked (it goes when the caller goes) and killed when the time is up. It unlinks
  # before answering, so a caller trapping exits gets no exit message from it.
  defp with_timeout(name, timeout, fun) do
    caller = self()
    ref = make_ref()

    pid =
      spawn_link(fn ->
        result = fun.()
        Process.unlink(caller)
        send(caller, {ref, result})
      end)

    monitor = Process.monitor(pid)

    receive do
      {^ref, result} ->
        Process.demonitor(monitor, [:flush])
        result

      {:DOWN, ^monitor, _, _, reason} ->
        {:error,
         Error.new(:serving_error, "#{inspect(name)}: the request exited: #{inspect(reason)}")}
    after
      timeout ->
        Process.unlink(pid)
        Process.exit(pid, :kill)
        Process.demonitor(monitor, [:flush])

        # it may have answered meanwhile
        receive do
          {^ref, _} -> :ok
        after
          0 -> :ok
        end

        {:error,
         Error.new(
           :timeout,
           "Nx.Serving #{inspect(name)} did not answer within #{timeout} ms (timeout:)"
         )}
    end
  end

  # At most this many pieces of a split request are in flight at once.
  @piece_concurrency 16

  defp run_whole(name, input, retries) do
    case do_batched_run(name, input, retries) do
      {:error, %Error{reason: :too_large} = e} ->
        case too_large_rows(e) do
          {rows, limit} -> split_run(name, input, rows, limit, retries)
          nil -> {:error, e}
        end

      other ->
        other
    end
  end

  # The serving's preprocess/2 checked the request before refusing it as too large, so every
  # input holds `rows` rows. A piece landing on a node whose serving has a smaller batch_size
  # is split again there (run_whole/3).
  defp split_run(name, input, rows, limit, retries) do
    inputs = if is_list(input), do: input, else: [input]

    for(start <- 0..(rows - 1)//limit, do: {start, min(limit, rows - start)})
    |> Task.async_stream(
      fn {start, n} ->
        piece = Enum.map(inputs, &rows_of(&1, rows, start, n))
        {start, n, run_whole(name, piece, retries)}
      end,
      max_concurrency: @piece_concurrency,
      timeout: :infinity
    )
    |> Enum.reduce_while([], fn
      {:ok, {_start, _n, {:ok, outputs}}}, acc ->
        {:cont, [outputs | acc]}

      {:ok, {start, n, {:error, e}}}, _acc ->
        rows_named = "rows #{start}..#{start + n - 1} of the request's #{rows}: "
        {:halt, {:error, %{e | message: rows_named <> e.message}}}
    end)
    |> case do
      {:error, _} = error -> error
      acc -> {:ok, acc |> Enum.reverse() |> Enum.zip_with(&join_rows/1)}
    end
  end

  defp rows_of(%{__struct__: Nx.Tensor} = t, _rows, start, n),
    do: Nx.slice_along_axis(t, start, n, axis: 0)

  defp rows_of(bin, rows, start, n) when is_binary(bin) do
    row_bytes = div(byte_size(bin), rows)
    binary_part(bin, start * row_bytes, n * row_bytes)
  end

  defp join_rows([bin | _] = bins) when is_binary(bin), do: IO.iodata_to_binary(bins)
  defp join_rows(tensors), do: Nx.concatenate(tensors)

  # The caller sees its request's node go down (its monitor fires) when :pg's scope process may
  # not have handled the nodedown yet: until it has, the dead node's members stay listed and
  # Nx.Serving's random pick may land on them again, on every retry. So a retry first waits,
  # at most this long, until every member sits on a connected node.
  @settle_ms 2_000

  defp do_batched_run(name, input, retries) do
    {:ok, Nx.Serving.batched_run(name, input)}
  rescue
    e in Error -> {:error, e}
    e -> {:error, Error.new(:serving_error, "#{inspect(name)}: #{Exception.message(e)}")}
  catch
    :exit, reason ->
      case exit_error(name, reason) do
        :retry when retries > 0 ->
          await_members_connected(@settle_ms)
          do_batched_run(name, input, retries - 1)

        :retry ->
          {:error, unavailable(name, "its node went down and no other node answered")}

        %Error{} = e ->
          {:error, e}
      end
  end

  defp await_members_connected(wait_ms) do
    nodes = [node() | Node.list(:connected)]
    stale? = Enum.any?(:pg.get_members(Nx.Serving.PG, Nx.Serving), &(node(&1) not in nodes))

    if stale? and wait_ms > 0 do
      Process.sleep(5)
      await_members_connected(wait_ms - 5)
    else
      :ok
    end
  end

  # What Nx.Serving exits with: {reason, {Nx.Serving, function, args}}. A request served on
  # another node that raised there exits with the exception.
  defp exit_error(name, {reason, {Nx.Serving, _fun, _args}}), do: exit_error(name, reason)
  defp exit_error(_name, {%Error{} = e, stack}) when is_list(stack), do: e
  defp exit_error(_name, :noconnection), do: :retry
  defp exit_error(_name, {:nodedown, _}), do: :retry

  defp exit_error({:local, _} = name, :noproc),
    do: unavailable(name, "no process serves it on this node")

  defp exit_error(name, :noproc), do: unavailable(name, "no process serves it on any node")

  defp exit_error(name, {e, stack}) when is_exception(e) and is_list(stack),
    do: Error.new(:serving_error, "#{inspect(name)}: #{Exception.message(e)}")

  defp exit_error(name, reason),
    do: Error.new(:serving_error, "#{inspect(name)}: the serving exited: #{inspect(reason)}")

  defp unavailable(name, why),
    do: Error.new(:unavailable, "Nx.Serving #{inspect(name)} is unavailable: #{why}")

  # ---- client side: one request -> an Nx.Batch of its rows -----------------------------------

  @doc false
  def preprocess(spec, input) do
    inputs =
      cond do
        is_list(input) and not proper_list?(input) ->
          raise request_error(
                  spec,
                  "expected a list of #{length(spec.inputs)} inputs, got an improper list: " <>
                    inspect(input, limit: 5)
                )

        is_list(input) ->
          input

        length(spec.inputs) == 1 ->
          [input]

        true ->
          raise request_error(spec, "expected a list of #{length(spec.inputs)} inputs")
      end

    if length(inputs) != length(spec.inputs) do
      names = Enum.map_join(spec.inputs, ", ", & &1.name)

      raise request_error(
              spec,
              "expects #{length(spec.inputs)} input(s) (#{names}), got #{length(inputs)}"
            )
    end

    tensors = request_tensors(spec, spec.inputs, inputs, 0) |> Enum.map(&unnamed/1)
    [rows | _] = all_rows = Enum.map(tensors, &elem(&1.shape, 0))

    if not Enum.all?(all_rows, &(&1 == rows)) do
      raise request_error(spec, "the inputs have different numbers of rows: #{inspect(all_rows)}")
    end

    # Nx.Serving 0.7 would split a larger request over several batches and join the pieces'
    # answers in the order they arrive (partitions run them concurrently), with the metadata,
    # and so the error, of the last piece only: a failed piece would come back as rows of
    # zeros. batched_run/3 splits such a request itself (see split_run/5).
    if rows > spec.batch_size do
      raise Error.new(:too_large, too_large(spec, rows),
              details: %{rows: rows, batch_size: spec.batch_size}
            )
    end

    # The inputs, then each row's index in the request (RowTags: what makes the answer right
    # when Nx.Serving splits the request over two batches).
    entry = List.to_tuple(tensors ++ [RowTags.tensor(rows)])
    {Nx.Batch.concatenate([entry]), rows}
  end

  # Axis names would travel into the batch, where Nx.Batch refuses to merge requests whose
  # names differ: one caller's names would fail the batch of every other.
  defp unnamed(%{names: names} = t) do
    if Enum.all?(names, &is_nil/1), do: t, else: Nx.rename(t, Enum.map(names, fn _ -> nil end))
  end

  defp proper_list?([_ | rest]), do: proper_list?(rest)
  defp proper_list?([]), do: true
  defp proper_list?(_tail), do: false

  defp request_tensors(spec, [info | infos], [x | xs], i),
    do: [request_tensor(spec, info, i, x) | request_tensors(spec, infos, xs, i + 1)]

  defp request_tensors(_spec, [], [], _i), do: []

  # The request's rows as a tensor of the type every request of this serving has (so requests
  # merge into one batch): f32 with quantize: :auto, the input's own type with :none.
  defp request_tensor(spec, info, i, %{__struct__: Nx.Tensor} = t) do
    want = want_type(spec, info)

    cond do
      t.vectorized_axes != [] ->
        input_error(spec, info, i, "got a vectorized tensor; put the rows on the leading axis")

      not rows_shape?(t.shape, info.shape) ->
        input_error(
          spec,
          info,
          i,
          "expected shape #{Batching.rows_shape(info.shape)}, got #{inspect(t.shape)}"
        )

      t.type == want ->
        t

      want == {:f, 32} and elem(t.type, 0) in [:f, :bf] ->
        Nx.as_type(t, want)

      want == {:f, 32} ->
        input_error(
          spec,
          info,
          i,
          "expected a float tensor (quantize: :auto; {:f, 64}, {:f, 16} and {:bf, 16} are " <>
            "converted), got #{inspect(t.type)}; a serving started with quantize: :none " <>
            "takes tensors in the input's own type #{inspect(info.type)}"
        )

      true ->
        input_error(
          spec,
          info,
          i,
          "expected type #{inspect(want)} (quantize: :none: the input's own type), got " <>
            "#{inspect(t.type)}"
        )
    end
  end

  defp request_tensor(spec, info, i, bin) when is_binary(bin) do
    {kind, bits} = type = want_type(spec, info)
    per_row = div(info.num_elements, spec.batch)
    row_bytes = per_row * div(bits, 8)

    if row_bytes > 0 and byte_size(bin) > 0 and rem(byte_size(bin), row_bytes) == 0 do
      shape = put_elem(info.shape, 0, div(byte_size(bin), row_bytes))
      bin |> Nx.from_binary(type) |> Nx.reshape(shape)
    else
      input_error(
        spec,
        info,
        i,
        "expected a whole number (>= 1) of rows of #{row_bytes} bytes (#{per_row} " <>
          "#{kind}#{bits} elements each: shape #{Batching.rows_shape(info.shape)}), got " <>
          "#{byte_size(bin)} bytes"
      )
    end
  end

  defp request_tensor(spec, info, i, other),
    do:
      input_error(
        spec,
        info,
        i,
        "expected an Nx tensor or a binary, got #{inspect(other, limit: 5)}"
      )

  defp want_type(%{quantize: :auto}, _info), do: {:f, 32}
  defp want_type(%{quantize: :none}, info), do: info.type

  defp rows_shape?(shape, graph_shape) do
    tuple_size(shape) == tuple_size(graph_shape) and tuple_size(shape) > 0 and
      elem(shape, 0) > 0 and Tuple.delete_at(shape, 0) == Tuple.delete_at(graph_shape, 0)
  end

  defp input_error(spec, info, i, what) do
    raise Error.new(
            :mismatch,
            "HexagonTpu.Serving: graph '#{spec.graph}' input '#{info.name}' (#{i}): #{what}",
            tensor: info.name
          )
  end

  defp too_large(spec, rows) do
    "HexagonTpu.Serving: graph '#{spec.graph}': a request of #{rows} rows is larger than " <>
      "the serving's batch_size of #{spec.batch_size} rows; send it with " <>
      "HexagonTpu.Serving.batched_run/3, which splits it into requests of at most " <>
      "batch_size rows and joins their answers in order, or run it with " <>
      "HexagonTpu.predict_batch/3"
  end

  defp too_large_rows(%Error{reason: :too_large, details: %{rows: rows, batch_size: limit}}),
    do: {rows, limit}

  defp too_large_rows(_other), do: nil

  defp request_error(spec, what),
    do: Error.new(:mismatch, "HexagonTpu.Serving: graph '#{spec.graph}' #{what}")

  @doc false
  # The request's rows of the batch answer(s): its outputs and each row's info (RowTags), in
  # the order Nx.Serving delivered them.
  def postprocess({{outputs, info}, meta}, rows, graph, output) do
    outputs |> output_list() |> RowTags.outputs(info, rows, meta, graph) |> as_output(output)
  end

  defp as_output(outputs, :nx), do: outputs
  defp as_output(outputs, :binary), do: Enum.map(outputs, &Nx.to_binary/1)

  # One output travels alone (see execute/4), several as a tuple.
  defp output_list(outputs) when is_tuple(outputs), do: Tuple.to_list(outputs)
  defp output_list(output), do: [output]

  # ---- server side: the Nx.Serving callbacks -------------------------------------------------

  @doc false
  # Nx.Serving's init/3: one model per partition (the partitions' options are not used). A
  # serving process keeps the errors of failed batches for the callers of split requests
  # (RowTags); an inline run (Nx.Serving.run/2) never splits a request, so needs none.
  def init(type, arg, partitions) do
    %{models: models} = arg
    count = length(models)

    by_partition =
      for i <- 0..(length(partitions) - 1), into: %{}, do: {i, Enum.at(models, rem(i, count))}

    table = if type == :process, do: RowTags.new_table()
    {:ok, Map.merge(arg, %{by_partition: by_partition, errors_table: table})}
  end

  @doc false
  # Nx.Serving's handle_batch/3: the function run in the serving's task for this batch.
  def handle_batch(batch, partition, state) do
    model = Map.fetch!(state.by_partition, partition)
    {:execute, fn -> execute(state, model, partition, batch) end, state}
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
