defmodule HexagonTpu.Models do
  # HexagonTpu.load_model/2 and load_models/2: the options of a model (one graph of a context,
  # its calls' defaults, its sampled profiles) and what turns a loaded context into one. Several
  # models go to the C core in one call (htpu_context_open_many: one list load where the
  # backend announces it), then each model's graph is opened as load_model/2 opens it.
  @moduledoc false

  alias HexagonTpu.{Context, Error, Graph, NIF, Options, Runtime}

  @doc false
  # The options of one model (the runtime's aside).
  def model_spec do
    %{
      graph: {:string_or_nil, "a graph name (a string without NUL bytes) or nil", nil},
      scheduler: {{:one_of, [:auto, :dirty_io, :normal]}, ":auto, :dirty_io or :normal", :auto},
      runtime: {{:struct_or_nil, Runtime}, "a %HexagonTpu.Runtime{} or nil", nil},
      profile_every:
        {&HexagonTpu.Profile.valid_every?/1, "a positive integer (executes per profile) or nil",
         nil},
      profile_level:
        {{:one_of, HexagonTpu.Profile.levels()}, HexagonTpu.Profile.levels_expected(), :detailed}
    }
    |> Map.merge(Map.drop(Context.load_spec(), [:graphs]))
  end

  @doc false
  # The context's load options for model options `o`: only the model's graph is loaded (and,
  # of an ONNX model holding several context binaries, the one holding it).
  def context_options(o) do
    o
    |> Map.take([:timeout, :priority, :queue_limit, :memory_limit_mb, :mapping, :graph])
    |> Map.put(:graphs, o.graph && [o.graph])
  end

  @doc false
  # The model: its graph opened (the graph keeps the context alive, so the model needs only
  # the graph's handle), the call defaults and the sampled profiles attached.
  # Its model_info carries the context's load info (:load: Context.load_info/1), read now.
  def from_context(ctx, o) do
    result = Graph.open(ctx, graph: o.graph, scheduler: o.scheduler)
    load = Context.load_info(ctx)
    Context.close(ctx)

    with {:ok, g} <- result, {:ok, load} <- load do
      g = %{
        g
        | timeout: o.timeout,
          priority: o.priority,
          model_info: Map.put(g.model_info, :load, load)
      }

      {:ok, HexagonTpu.Profile.attach(g, o.profile_every, o.profile_level)}
    else
      {:error, _} = error ->
        with {:ok, g} <- result, do: Graph.close(g)
        error
    end
  end

  @doc false
  # load_models/2 with the runtime chosen: every model checked first, then one core call.
  def load_many(runtime, entries, where) do
    with {:ok, loads} <- prepare_all(runtime, entries, where),
         :ok <- Context.check_max_binary_bytes(),
         {:ok, results} <- Error.wrap(NIF.context_open_many(runtime.ref, requests(loads))) do
      {:ok, Enum.zip_with(loads, results, &model_result/2)}
    end
  end

  defp prepare_all(runtime, entries, where) do
    Enum.reduce_while(Enum.with_index(entries), {:ok, []}, fn {{source, o}, i}, {:ok, acc} ->
      here = "#{where}: model #{i}"

      case HexagonTpu.Profile.check_backend(runtime, o.profile_every, o.profile_level, here) do
        :ok -> {:cont, {:ok, [{source, o} | acc]}}
        {:error, %Error{} = e} -> {:halt, {:error, %{e | message: "#{here}: #{e.message}"}}}
      end
    end)
    |> case do
      {:ok, loads} -> {:ok, Enum.reverse(loads)}
      error -> error
    end
  end

  defp requests(loads) do
    Enum.map(loads, fn {src, o} ->
      {src, o |> context_options() |> Context.load_options()}
    end)
  end

  defp model_result({_src, o}, {:ok, ref, info}), do: from_context(Context.from_nif(ref, info), o)
  defp model_result(_load, {:error, _} = error), do: Error.wrap(error)

  @doc false
  # The latest of the entries' :timeout (ms or :infinity); nil when one has none.
  def latest_timeout(entries) do
    timeouts = Enum.map(entries, fn {_source, o} -> o.timeout end)

    cond do
      Enum.any?(timeouts, &is_nil/1) -> nil
      :infinity in timeouts -> :infinity
      true -> Enum.max(timeouts)
    end
  end

  @doc false
  # The entries of load_models/2, before any runtime: each source classified, with its options
  # over the call's. {:ok, [{source, options map}]} or the first bad one's error.
  def entries(sources, common, where) do
    if sources?(sources) do
      spec = Map.delete(model_spec(), :runtime)

      # the call's options first, named as the call's: a bad one is no model's
      with {:ok, _} <- Options.validate(common, spec, where),
           do: entries_each(sources, common, spec, where)
    else
      not_sources(sources, where)
    end
  end

  @doc false
  # Is `sources` what load_models/2 takes: a non-empty proper list (of anything, checked later)?
  def sources?([_ | _] = sources), do: proper?(sources)
  def sources?(_sources), do: false

  defp proper?([]), do: true
  defp proper?([_ | tail]), do: proper?(tail)
  defp proper?(_tail), do: false

  defp not_sources(sources, where),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "#{where}: expected a non-empty list of sources (a path, {:file, path}, " <>
           "{:binary, bytes}, or {source, options}), got #{inspect(sources, limit: 5)}"
       )}

  defp entries_each(sources, common, spec, where) do
    Enum.reduce_while(Enum.with_index(sources), {:ok, []}, fn {entry, i}, {:ok, acc} ->
      {source, own} = split_entry(entry)

      here = "#{where}: model #{i}"

      # the model's own options over the call's: its values win (each list given once)
      with :ok <- no_runtime_option(own, here),
           {:ok, o} <- Options.validate(over(common, own), spec, here),
           {:ok, src} <- source_of(source, here) do
        {:cont, {:ok, [{src, o} | acc]}}
      else
        error -> {:halt, error}
      end
    end)
    |> case do
      {:ok, list} -> {:ok, Enum.reverse(list)}
      error -> error
    end
  end

  # What is no keyword list is left for Options.validate/3 to refuse.
  defp over(common, own) do
    if Keyword.keyword?(own), do: Keyword.merge(common, own), else: own
  end

  # One runtime loads every model of the call: a runtime option among a model's own is
  # misplaced, not unknown. (What is no keyword list is Options.validate/3's to refuse.)
  defp no_runtime_option(own, here) do
    runtime_options = [:runtime | Runtime.option_names() -- [:env]]
    keys = if Keyword.keyword?(own), do: Keyword.keys(own), else: []

    case Enum.find(keys, &(&1 in runtime_options)) do
      nil ->
        :ok

      key ->
        what = if key == :runtime, do: "", else: " (a runtime option)"

        {:error,
         Error.new(
           :invalid_option,
           "#{here}: #{inspect(key)}#{what} applies to the whole call, all the models " <>
             "loading into one runtime: give it in the call's options, not in a model's own"
         )}
    end
  end

  defp source_of(source, here) do
    case Context.classify_source(source) do
      {:error, %Error{} = e} -> {:error, %{e | message: "#{here}: #{e.message}"}}
      ok -> ok
    end
  end

  @doc false
  # An entry of load_models/2's list: {source, its own options}.
  def split_entry({source, opts}) when is_list(opts) and not is_atom(source), do: {source, opts}

  def split_entry(source), do: {source, []}
end
