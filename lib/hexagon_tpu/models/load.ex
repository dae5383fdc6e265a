defmodule HexagonTpu.Models.Load do
  # HexagonTpu.load_model/2, load_models/2 and load_models!/2 behind the facade: the runtime
  # chosen (the caller's, or the shared one for the runtime options, held for the whole load),
  # a shared runtime closed under the load asked for again, and the load's telemetry span.
  # What a model is (its options, its graph opened from a context) is HexagonTpu.Models'.
  @moduledoc false

  alias HexagonTpu.{Context, Error, Graph, Models, Options, Runtime}

  # A shared runtime closed between Runtime.shared/1 and the load (Runtime.close_shared/0 in
  # another process) is not the caller's doing: ask for the shared runtime again (shared/1
  # opens a fresh one) and retry, a few times at most. A :closed runtime the caller passed
  # stays an error.
  @shared_load_attempts 3

  @spec load_model(term(), term()) :: {:ok, Graph.t()} | {:error, Error.t()}
  def load_model(source, opts) do
    HexagonTpu.Telemetry.load_span(%{source: telemetry_source(source)}, fn ->
      do_load_model(source, opts)
    end)
  end

  @spec load_models(term(), term()) ::
          {:ok, [{:ok, Graph.t()} | {:error, Error.t()}]} | {:error, Error.t()}
  def load_models(sources, opts) do
    where = "HexagonTpu.load_models/2"

    HexagonTpu.Telemetry.list_load_span(telemetry_metadata(sources), fn ->
      with {:ok, given, rt_opts, common} <- call_options(opts, where),
           {:ok, entries} <- Models.entries(sources, common, where) do
        # the models' latest :timeout bounds the shared runtime's open (none if one has none)
        open_timeout = Models.latest_timeout(entries)

        with_runtime(given, rt_opts, open_timeout, where, &Models.load_many(&1, entries, where))
      end
    end)
  end

  # load_models/2's own options: {:ok, :runtime, the runtime options, the models' common ones}.
  defp call_options(opts, where) do
    if Keyword.keyword?(opts) do
      {rt_opts, own} = Keyword.split(opts, Runtime.option_names() -- [:env])
      {runtime, common} = Keyword.split(own, [:runtime])
      runtime_spec = Map.take(Models.model_spec(), [:runtime])

      with {:ok, %{runtime: given}} <- Options.validate(runtime, runtime_spec, where),
           do: {:ok, given, rt_opts, common}
    else
      # its error for what is no keyword list
      Options.validate(opts, %{}, where)
    end
  end

  # All or nothing: the models, or the first error raised (the models that did load closed).
  @spec load_models!(term(), term()) :: [Graph.t()]
  def load_models!(sources, opts) do
    results = Error.unwrap!(load_models(sources, opts))

    case Enum.find(results, &match?({:error, _}, &1)) do
      nil ->
        Enum.map(results, fn {:ok, model} -> model end)

      {:error, error} ->
        for {:ok, model} <- results, do: Graph.close(model)
        raise error
    end
  end

  # One load span per model of the list (the whole call's error in each when the list is no
  # list, or a bad option fails it before anything loads).
  defp telemetry_metadata(sources) do
    if Models.sources?(sources) do
      n = length(sources)

      sources
      |> Enum.with_index()
      |> Enum.map(fn {entry, i} ->
        {source, _own} = Models.split_entry(entry)
        %{source: telemetry_source(source), list_index: i, list_size: n}
      end)
    else
      [%{source: :invalid}]
    end
  end

  # Never the model bytes themselves: handlers would receive megabytes on every load.
  defp telemetry_source({:binary, _}), do: :binary
  defp telemetry_source({:file, path}), do: path

  defp telemetry_source(path) when is_binary(path) do
    if byte_size(path) < 4096 and String.printable?(path), do: path, else: :binary
  end

  defp telemetry_source(_other), do: :invalid

  defp do_load_model(source, opts) do
    rt_names = Runtime.option_names() -- [:env]
    {rt_opts, own} = Options.split(opts, rt_names)

    where = "HexagonTpu.load_model/2"

    with {:ok, o} <- Options.validate(own, Models.model_spec(), where) do
      # A shared runtime is held until the graph is open (and so keeps it in use).
      # the load's :timeout bounds the shared runtime's open too, when it has to be opened
      with_runtime(o.runtime, rt_opts, o.timeout, where, fn runtime ->
        load_opts = o |> Models.context_options() |> Enum.reject(&is_nil(elem(&1, 1)))

        with :ok <-
               HexagonTpu.Profile.check_backend(runtime, o.profile_every, o.profile_level, where),
             {:ok, ctx} <- load_context(runtime, source, o.runtime, rt_opts, load_opts) do
          Models.from_context(ctx, o)
        end
      end)
    end
  end

  defp load_context(runtime, source, nil = _given, rt_opts, load_opts),
    do: load_shared(runtime, source, rt_opts, load_opts, @shared_load_attempts)

  defp load_context(runtime, source, _given, _rt_opts, load_opts),
    do: Context.load(runtime, source, load_opts)

  defp load_shared(runtime, source, rt_opts, load_opts, attempts) do
    case Context.load(runtime, source, load_opts) do
      {:error, %Error{reason: :closed}} when attempts > 1 ->
        with {:ok, fresh} <- Runtime.shared(rt_opts),
             do: load_shared(fresh, source, rt_opts, load_opts, attempts - 1)

      other ->
        other
    end
  end

  # `where` names the function called, for the error of :runtime given with runtime options.
  defp with_runtime(nil, rt_opts, timeout, _where, fun),
    do: Runtime.with_shared(rt_opts, fun, timeout)

  defp with_runtime(%Runtime{} = rt, [], _timeout, _where, fun), do: fun.(rt)

  defp with_runtime(%Runtime{}, rt_opts, _timeout, where, _fun) do
    {:error,
     Error.new(
       :invalid_option,
       "#{where}: expected either :runtime or runtime options, got both " <>
         "(#{inspect(Keyword.keys(rt_opts))})"
     )}
  end
end
