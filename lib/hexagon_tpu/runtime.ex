defmodule HexagonTpu.Runtime do
  @moduledoc """
  The QNN libraries of one backend, loaded and initialized (QNN log, backend, device).

  Contexts opened on a runtime keep it alive: closing (or dropping) the runtime while models
  are open is safe, the QNN teardown happens when the last of them goes.

  Models loaded with `HexagonTpu.load_model/2` share one runtime per set of runtime options
  (see `shared/1`), so each model does not load the libraries and create a QNN backend and
  device of its own.

  ## Example

      {:ok, rt} = HexagonTpu.Runtime.open(backend: :reference)
      rt.info.provider_name    #=> "HTPU_REFERENCE"
      {:ok, ctx} = HexagonTpu.Context.load(rt, "model.bin")
      :ok = HexagonTpu.Runtime.close(rt)   # ctx keeps the libraries loaded
  """

  alias HexagonTpu.{Error, NIF, Options}

  defstruct [:ref, :info, :options]

  @type t :: %__MODULE__{ref: reference(), info: map(), options: keyword()}

  @log_levels %{error: 1, warn: 2, info: 3, verbose: 4, debug: 5}

  @path_or_nil "a path (string) or nil"

  @spec_opts %{
    backend: {&__MODULE__.valid_backend?/1, ":htp, :reference or a library path", :htp},
    system_library: {:string_or_nil, @path_or_nil, nil},
    dsp_library_path: {:string_or_nil, @path_or_nil, nil},
    log_level:
      {{:one_of, [:error, :warn, :info, :verbose, :debug, 1, 2, 3, 4, 5]},
       ":error, :warn, :info, :verbose, :debug or 1..5", :warn},
    backend_id: {:non_neg_integer, "a non-negative integer", 0},
    skip_device: {:boolean, "a boolean", false},
    env: {&__MODULE__.valid_env?/1, "a list of {name, value | nil} string tuples", []}
  }

  @doc "The option names `open/1` accepts."
  @spec option_names() :: [atom()]
  def option_names, do: Map.keys(@spec_opts)

  @doc """
  Loads the backend and system libraries and creates the QNN log, backend and device.

  ## Options

    * `:backend` - `:htp` (default: `/usr/lib/libQnnHtp.so`), `:reference` (the reference
      backend shipped in this package's `priv/`, runs anywhere) or a path to a backend library
    * `:system_library` - path of the QNN system library; defaults to
      `/usr/lib/libQnnSystem.so`, or the reference one with `backend: :reference`
    * `:dsp_library_path` - directory of the DSP-side libraries; the C core `setenv()`s
      `DSP_LIBRARY_PATH` and `ADSP_LIBRARY_PATH` before creating the backend (a
      `System.put_env/2` would not reach the C library's `getenv`)
    * `:log_level` - QNN log level: `:error`, `:warn` (default), `:info`, `:verbose`, `:debug`
    * `:backend_id` - accept only the provider with this QNN backend id (default 0: any,
      preferring HTP)
    * `:skip_device` - do not create a QNN device (backends without one); default `false`
    * `:env` - **test hook**: `[{"HTPU_REF_FAULTS", "graphExecute:1:1007"}]` sets these OS
      environment variables (`nil` unsets) around the open only, then restores them; the
      reference backend reads its fault-injection rules then (docs/reference-backend.md).
      `setenv` is not thread-safe against concurrent `getenv`, so do not use it in production.
  """
  @spec open(keyword()) :: {:ok, t()} | {:error, Error.t()}
  def open(opts \\ []) do
    with {:ok, o} <- Options.validate(opts, @spec_opts, "HexagonTpu.Runtime.open/1"),
         {:ok, nif_opts} <- nif_options(o),
         {:ok, ref, info} <- Error.wrap(NIF.runtime_open(nif_opts)) do
      {:ok, %__MODULE__{ref: ref, info: info, options: opts}}
    end
  end

  @doc "Like `open/1`, raising `HexagonTpu.Error`."
  @spec open!(keyword()) :: t()
  def open!(opts \\ []), do: HexagonTpu.unwrap!(open(opts))

  @doc """
  The runtime shared by every caller that passes the same options (`:env` is not accepted),
  opened on first use and kept for the life of the VM.
  """
  @spec shared(keyword()) :: {:ok, t()} | {:error, Error.t()}
  def shared(opts \\ []) do
    with {:ok, o} <-
           Options.validate(opts, Map.delete(@spec_opts, :env), "HexagonTpu.Runtime.shared/1") do
      key = {__MODULE__, :shared, o}

      case :persistent_term.get(key, nil) do
        # Not alive: closed by close/1 or made by a purged copy of the NIF library.
        %__MODULE__{} = rt ->
          if NIF.handle_alive(rt.ref) do
            {:ok, rt}
          else
            :persistent_term.erase(key)
            shared(opts)
          end

        nil ->
          with {:ok, rt} <- open(opts) do
            # Two first callers may race: keep the first stored runtime; the other is closed.
            case :persistent_term.get(key, nil) do
              nil ->
                :persistent_term.put(key, rt)
                {:ok, rt}

              winner ->
                close(rt)
                {:ok, winner}
            end
          end
      end
    end
  end

  @doc """
  Forgets the shared runtimes and drops their references (models loaded on them keep them
  alive until closed). The next `shared/1` opens a fresh runtime. Useful after a
  `:device_reset` error, and before the VM stops.
  """
  @spec close_shared() :: :ok
  def close_shared do
    for {{__MODULE__, :shared, _} = key, %__MODULE__{} = rt} <- :persistent_term.get() do
      :persistent_term.erase(key)
      close(rt)
    end

    :ok
  end

  @doc """
  Drops this handle's reference. The libraries are unloaded once no context (or graph) opened
  on the runtime remains. Idempotent; later use of the handle gives a `:closed` error.
  """
  @spec close(t()) :: :ok
  def close(%__MODULE__{ref: ref}), do: NIF.runtime_close(ref)

  @doc """
  What the loader found, read at open: `:backend_lib`, `:system_lib`, `:provider_name`,
  `:backend_id`, `:core_api_version`, `:backend_api_version` (`{major, minor, patch}`),
  `:build_id`, `:system_provider_name`, `:system_api_version`, `:has_device`,
  `:dsp_library_path`.
  """
  @spec info(t()) :: map()
  def info(%__MODULE__{info: info}), do: info

  @doc "Path of a file shipped in this package's `priv/` (the reference libraries, the builder)."
  @spec priv_path(String.t()) :: String.t()
  def priv_path(file), do: Path.join(to_string(:code.priv_dir(:hexagon_tpu)), file)

  defp nif_options(o) do
    {backend_lib, default_system} =
      case o.backend do
        :htp -> {nil, nil}
        :reference -> {priv_path("libhtpu_refbackend.so"), priv_path("libhtpu_refsystem.so")}
        path -> {path, nil}
      end

    {:ok,
     %{
       backend_lib: backend_lib,
       system_lib: o.system_library || default_system,
       dsp_library_path: o.dsp_library_path,
       backend_id: o.backend_id,
       log_level: Map.get(@log_levels, o.log_level, o.log_level),
       skip_device: o.skip_device,
       env: o.env
     }}
  end

  @doc false
  def valid_backend?(b), do: b in [:htp, :reference] or (is_binary(b) and b != "")

  @doc false
  def valid_env?(list) when is_list(list) do
    Enum.all?(list, fn
      {k, v} when is_binary(k) and k != "" -> is_nil(v) or is_binary(v)
      _ -> false
    end)
  end

  def valid_env?(_), do: false
end
