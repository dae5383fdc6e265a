defmodule HexagonTpu.Runtime.OpenOptions do
  # The options of Runtime.open/1 (and so of shared/1 and load_model/2's runtime options):
  # their checks, and the map the NIF's runtime_open takes, with the reference backend's
  # libraries from this package's priv/. Of HexagonTpu.Runtime's parts it calls Env and Perf.
  @moduledoc false

  alias HexagonTpu.Options
  alias HexagonTpu.Graph.CallOptions
  alias HexagonTpu.Runtime.{Env, Perf}

  @log_levels %{error: 1, warn: 2, info: 3, verbose: 4, debug: 5}

  @path_or_nil "a path (a string without NUL bytes) or nil"

  # The C side's htpu_runtime_options fields backend_id, startup_retries and
  # startup_retry_delay_ms are uint32_t.
  @uint32_max 4_294_967_295
  @uint32 "an integer in 0..#{@uint32_max}"

  @spec_opts %{
    backend:
      {&__MODULE__.valid_backend?/1,
       ":htp, :reference or a library path (a string without NUL bytes)", :htp},
    system_library: {:string_or_nil, @path_or_nil, nil},
    dsp_library_path: {:string_or_nil, @path_or_nil, nil},
    qnn: {:string_or_nil, @path_or_nil, nil},
    log_level:
      {{:one_of, [:error, :warn, :info, :verbose, :debug, 1, 2, 3, 4, 5]},
       ":error, :warn, :info, :verbose, :debug or 1..5", :warn},
    backend_id: {{:integer_in, 0, @uint32_max}, @uint32, 0},
    skip_device: {:boolean, "a boolean", false},
    perf_profile: {{:one_of, Perf.names()}, Perf.expected(), :default},
    fastrpc_library: {:string_or_nil, @path_or_nil, nil},
    recovery: {&__MODULE__.valid_recovery?/1, "true, false or a non-negative integer", true},
    # nil: the C core's default (htpu_runtime_options_init)
    startup_retries: {{:integer_in, 0, @uint32_max}, @uint32, nil},
    startup_retry_delay_ms: {{:integer_in, 0, @uint32_max}, @uint32 <> " (milliseconds)", nil},
    spill_fill_sharing: {:boolean, "a boolean", false},
    npu_lock:
      {&__MODULE__.valid_npu_lock?/1,
       "an absolute path (a string without NUL bytes), false (no lock) or nil (the default)",
       nil},
    npu_lock_timeout:
      {{:integer_in, 1, 24 * 3600 * 1000}, "a positive integer (milliseconds, at most 24 h)", nil},
    open_timeout: {&CallOptions.check_timeout/1, "", nil},
    env: {&Env.check/1, "a list of {name, value | nil} string tuples", []}
  }

  # name => {check, expected, default} (HexagonTpu.Options).
  @spec spec() :: Options.spec()
  def spec, do: @spec_opts

  # The NIF's options for open/1's `opts`, checked as `where`.
  @spec to_nif(term(), String.t()) :: {:ok, map()} | {:error, HexagonTpu.Error.t()}
  def to_nif(opts, where) do
    with {:ok, o} <- Options.validate(opts, @spec_opts, where), do: {:ok, nif_options(o)}
  end

  # Path of a file shipped in this package's priv/ (Runtime.priv_path/1).
  @spec priv_path(String.t()) :: String.t()
  def priv_path(file), do: Path.join(to_string(:code.priv_dir(:hexagon_tpu)), file)

  defp nif_options(o) do
    # The reference backend dlopens its allocator from its own directory; the core must dlopen
    # the very same path to share that (initialised) instance.
    {backend_lib, default_system, default_fastrpc} =
      case o.backend do
        :htp ->
          {nil, nil, nil}

        :reference ->
          {priv_path("libhtpu_refbackend.so"), priv_path("libhtpu_refsystem.so"),
           priv_path("libhtpu_refcdsprpc.so")}

        path ->
          {path, nil, nil}
      end

    %{
      backend_lib: backend_lib,
      system_lib: o.system_library || default_system,
      dsp_library_path: o.dsp_library_path,
      qnn_set: o.qnn,
      fastrpc_lib: o.fastrpc_library || default_fastrpc,
      backend_id: o.backend_id,
      log_level: Map.get(@log_levels, o.log_level, o.log_level),
      skip_device: o.skip_device,
      perf_profile: o.perf_profile,
      recovery_retries: recovery_retries(o.recovery),
      startup_retries: o.startup_retries,
      startup_retry_delay_ms: o.startup_retry_delay_ms,
      spill_fill_sharing: o.spill_fill_sharing,
      npu_lock_path: npu_lock_path(o.npu_lock),
      npu_lock_timeout_ns: o.npu_lock_timeout && o.npu_lock_timeout * 1_000_000,
      open_timeout_ns: o.open_timeout && CallOptions.timeout_ns(o.open_timeout),
      env: o.env
    }
    # nil integers: keep the core's defaults
    |> Map.reject(fn {k, v} ->
      is_nil(v) and
        k in [:startup_retries, :startup_retry_delay_ms, :npu_lock_timeout_ns, :open_timeout_ns]
    end)
  end

  # nil: the application environment's, else the C library's default (nil to the NIF); false:
  # no lock ("" to the library)
  defp npu_lock_path(nil) do
    case Application.get_env(:hexagon_tpu, :npu_lock) do
      nil -> nil
      other -> npu_lock_path(other)
    end
  end

  defp npu_lock_path(false), do: ""
  defp npu_lock_path(path), do: path

  defp recovery_retries(true), do: 1
  defp recovery_retries(false), do: 0
  defp recovery_retries(n) when is_integer(n), do: n

  # The checks of @spec_opts that are functions (remote captures, so public).
  def valid_npu_lock?(v),
    do:
      is_nil(v) or v == false or
        (is_binary(v) and String.starts_with?(v, "/") and not String.contains?(v, <<0>>))

  def valid_recovery?(v), do: is_boolean(v) or (is_integer(v) and v >= 0 and v < 1_000)

  def valid_backend?(b),
    do: b in [:htp, :reference] or (is_binary(b) and b != "" and not String.contains?(b, <<0>>))
end
