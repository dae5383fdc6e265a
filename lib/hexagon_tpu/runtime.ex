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

  alias HexagonTpu.{Error, NIF}
  alias HexagonTpu.Runtime.{Env, OpenOptions, Perf, Retirement, Shared}

  defstruct [:ref, :info, :options]

  @type t :: %__MODULE__{ref: reference(), info: map(), options: keyword()}

  # What the docs below quote; the options themselves are checked in Runtime.OpenOptions.
  @perf_profiles Perf.names()
  @perf_expected Perf.expected()
  @max_env Env.max()
  @idle_expected Shared.idle_expected()

  @typedoc "A performance profile (what each votes: [docs/board.md](docs/board.md)); `:default` casts no vote."
  @type perf_profile ::
          :burst
          | :sustained_high_performance
          | :high_performance
          | :balanced
          | :low_balanced
          | :high_power_saver
          | :power_saver
          | :low_power_saver
          | :extreme_power_saver
          | :default

  @doc """
  The option names `open/1` accepts.

  ## Examples

      iex> :backend in HexagonTpu.Runtime.option_names()
      true
  """
  @spec option_names() :: [atom()]
  def option_names, do: Map.keys(OpenOptions.spec())

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
    * `:qnn` - a QNN set's folder: one QAIRT release's backend, system library, stub and skel
      (`/usr/lib/onnxruntime-qnn` holds QNN 2.48 on the board's image; `htpu doctor` lists
      the sets installed). The runtime uses its libraries (with `backend:` left at `:htp`),
      opens its stubs first and sets the DSP search path to its skel's folder unless
      `:dsp_library_path` is given. One set per OS process: a runtime of another set is an
      `:invalid_argument` error before any QNN call ([docs/board.md](docs/board.md), "QNN
      sets")
    * `:log_level` - QNN log level: `:error`, `:warn` (default), `:info`, `:verbose`, `:debug`
    * `:backend_id` - accept only the provider with this QNN backend id, 0..4294967295
      (default 0: any, preferring HTP)
    * `:skip_device` - do not create a QNN device (backends without one); default `false`
    * `:perf_profile` - the performance profile voted while the runtime is open: #{@perf_expected}
      (default `:default`: no vote, the DSP's own governor decides). Change it later with
      `set_perf_profile/2`, or raise it for single calls with `HexagonTpu.predict/3`'s
      `:perf_profile`. Backends without the HTP perf infrastructure accept only `:default`
      (`:unsupported` error otherwise; `info/1` says `has_perf_infrastructure`)
    * `:fastrpc_library` - the FastRPC library providing `rpcmem_*` shared memory for
      `HexagonTpu.Graph.alloc_io/1`; default `libcdsprpc.so` (the reference allocator in
      `priv/` with `backend: :reference`)
    * `:recovery` - after a DSP subsystem restart (QNN error 1007) the core recreates the
      context from its retained binary, re-registers shared buffers and retries the call:
      `true` (default, 1 retry), `false` (off: the call fails with `qnn_code: 1007`) or the
      number of retries. Opening a graph on a context the restart made stale recovers it too;
      a recreate that fails while the DSP is still coming back is retried as many times, with
      the `:startup_retry_delay_ms` backoff. A restart that cannot be recovered is a
      `:device_reset` error
    * `:startup_retries` - transient backend/device creation failures (the first FastRPC
      session after boot) are retried this many times (default 3), with
      `:startup_retry_delay_ms` (default 100) as the first back-off, doubled per retry (at
      most 10 s). Both 0..4294967295 (the C core's `uint32_t`).
      `info/1`'s `:startup_attempts` says how many attempts it took
    * `:spill_fill_sharing` - `false` (default): each context its own spill-fill buffer;
      `true`: the runtime's contexts share one (HTP's `REGISTER_MULTI_CONTEXTS`; one buffer
      instead of one per model, 20 MiB instead of 80 for four models of 20 MiB) where the
      backend takes it, but their executes then run one context at a time: two models
      called at once get about half the calls per second (0.5x in the bench). Turn it on when
      memory is short and the models take turns anyway ([docs/board.md](docs/board.md), "What a model costs"). `info/1`'s
      `:spill_fill_sharing` and `:spill_fill_note` say what the backend made of it
    * `:npu_lock` - the NPU lock: a file every program using hexagon_tpu locks (`flock`)
      around QNN session creation (this open's backend and device, every load and recovery on
      the runtime), so two programs never create sessions at the same moment; on the board a
      session created beside another program's has coincided with hard resets
      ([docs/board.md](docs/board.md), "One NPU user at a time"). An absolute path; `false` for
      no lock; `nil` (default): the application environment's `:npu_lock`, else the C
      library's default (`HTPU_NPU_LOCK` from the VM's start environment, else
      `/tmp/hexagon_tpu-npu.lock`). `System.put_env/2` does not reach the library: set it here
    * `:npu_lock_timeout` - how long, in milliseconds, this open and the loads that name no
      `:timeout` of their own wait for another program's creation (a load's `:timeout` bounds
      its wait); default 60 s. Past it the call fails with a `:timeout` error naming the
      holder ("held by pid 1234 (htpu), loading file 'm.bin'").
      `HexagonTpu.stats/0` counts the waits (`:npu_lock_waits`, `:npu_lock_waiting`,
      `:npu_lock_wait_ns_total`, `:npu_lock_timeouts`)
    * `:open_timeout` - milliseconds (a positive integer, or `:infinity`: 24 h): bounds this
      open where it waits: for the NPU lock and for executes in flight in this VM (a backend
      and device are a QNN session, never created beside an execute). Past it the open fails
      with a `:timeout` error. `nil` (default): no bound but the lock's. Not one of the options
      a shared runtime is keyed by: `HexagonTpu.load_model/2` passes its `:timeout` here when
      it opens one
    * `:env` - OS environment variables for the libraries this open loads and creates:
      `[{"NAME", "value"}]` (`nil` unsets) is set around the open only, then restored. The QNN
      backend and FastRPC libraries read their settings with `getenv` when they are created,
      and the VM keeps its own copy of the environment, so `System.put_env/2` never reaches
      them (`:dsp_library_path` covers the DSP library paths; this is for anything else a
      vendor library reads). At most #{@max_env} entries; a name is a non-empty string without
      `=` or NUL bytes, a value `nil` or a string without NUL bytes (anything else is an
      `:invalid_option` error saying which). `setenv` is not safe against a concurrent
      `getenv` on another thread: use it at startup, not while other runtimes are working.
      The tests use it for the reference backend's `HTPU_REF_*` rules (fault injection,
      latency, device; [docs/reference-backend.md](docs/reference-backend.md)): that use is test wiring, not an API

  ## Examples

      iex> {:ok, rt} = HexagonTpu.Runtime.open(backend: :reference)
      iex> {rt.info.provider_name, rt.info.device_arch}
      {"HTPU_REFERENCE", 68}
      iex> HexagonTpu.Runtime.close(rt)
      :ok

      iex> {:error, error} = HexagonTpu.Runtime.open(backend: "/nonexistent/libQnnHtp.so")
      iex> {error.reason, error.message}
      {:load_backend, "loading the backend library '/nonexistent/libQnnHtp.so' failed: /nonexistent/libQnnHtp.so: cannot open shared object file: No such file or directory"}
  """
  @spec open(keyword()) :: {:ok, t()} | {:error, Error.t()}
  def open(opts \\ []) do
    with {:ok, nif_opts} <- OpenOptions.to_nif(opts, "HexagonTpu.Runtime.open/1"),
         {:ok, ref, info} <- Error.wrap(NIF.runtime_open(nif_opts)) do
      # QNN libraries are loaded now: have what is left open closed when a script ends.
      HexagonTpu.Shutdown.arrange_at_exit()
      {:ok, %__MODULE__{ref: ref, info: info, options: opts}}
    end
  end

  @doc """
  Like `open/1`, raising `HexagonTpu.Error`.

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference, perf_profile: :burst)
      iex> HexagonTpu.Runtime.info(rt).perf_profile
      :burst
      iex> HexagonTpu.Runtime.open!(backend: :reference, log_level: :loud)
      ** (HexagonTpu.Error) invalid_option: HexagonTpu.Runtime.open/1: expected :log_level to be :error, :warn, :info, :verbose, :debug or 1..5, got :loud
  """
  @spec open!(keyword()) :: t()
  def open!(opts \\ []), do: Error.unwrap!(open(opts))

  @doc """
  The runtime shared by every caller that passes the same options (`:env` is not accepted),
  opened on first use and kept while models use it: one that no context or model has been
  open on for the idle period (`:shared_runtime_idle_ms`, see `close_idle_shared/1`) is closed,
  and the next call opens a fresh one. `close_shared/0` closes them all now.

  Concurrent first callers get the same runtime: the open is serialized per option set (a
  lock on this node that queues the others until the open is done), so only one runtime is
  ever opened for it. The lookup itself takes no lock (an ETS read that gives each caller its
  own copy of the term, safe to keep and to pass on). The runtime returned is never one being
  retired, and the call counts as a use: it has at least the idle period to load a model into
  it (`HexagonTpu.load_model/2` holds it for the whole load).

  ## Examples

      iex> {:ok, rt} = HexagonTpu.Runtime.shared(backend: :reference)
      iex> {:ok, again} = HexagonTpu.Runtime.shared(backend: :reference)
      iex> again.ref == rt.ref
      true
      iex> {:ok, other} = HexagonTpu.Runtime.shared(backend: :reference, perf_profile: :burst)
      iex> other.ref == rt.ref
      false
  """
  @spec shared(keyword()) :: {:ok, t()} | {:error, Error.t()}
  def shared(opts \\ []), do: Shared.get(opts, &open/1)

  @doc false
  # load_model/2: `fun.(runtime)` with the shared runtime for `opts`, which cannot be retired
  # meanwhile; open_timeout bounds its open (Runtime.Shared.with_runtime/4).
  def with_shared(opts, fun, open_timeout \\ nil),
    do: Shared.with_runtime(opts, fun, open_timeout, &open/1)

  @doc """
  Forgets the shared runtimes and drops their references (models loaded on them keep them
  alive until closed). The next `shared/1` opens a fresh runtime. Useful after a
  `:device_reset` error, and before the VM stops.

  A `HexagonTpu.load_model/2` racing it still succeeds: if the shared runtime it picked is
  closed under it, it asks `shared/1` again and loads into the fresh one.

  ## Examples

      iex> {:ok, rt} = HexagonTpu.Runtime.shared(backend: :reference)
      iex> HexagonTpu.Runtime.close_shared()
      :ok
      iex> {:ok, fresh} = HexagonTpu.Runtime.shared(backend: :reference)
      iex> fresh.ref == rt.ref
      false
  """
  @spec close_shared() :: :ok
  def close_shared, do: Shared.close_all()

  @doc """
  Closes the shared runtimes (`shared/1`, and so `HexagonTpu.load_model/2`'s) that nothing
  uses any more; returns `{:ok, count}` of those closed.

  A shared runtime is closed when, for the idle period:

    * no context or model loaded on it has been open (closed with `close/1`, or dropped and
      garbage-collected: a dropped model keeps its runtime until its process collects it), and
    * no `shared/1` call or load has used it, and no load is using it now.

  It runs by itself: while shared runtimes are open, every half idle period (at least 1 s, at
  most 60 s), so a runtime goes between one and one and a half idle periods after its last
  model. The period is the application's `:shared_runtime_idle_ms` (default 60_000;
  `:infinity` keeps shared runtimes until `close_shared/0`, as before):

      config :hexagon_tpu, shared_runtime_idle_ms: 300_000

  On the board opening a runtime opens a FastRPC session (slow, and the first after boot may
  fail and be retried), so a program that loads and closes models in turn keeps its runtime
  as long as the gaps are shorter than the period, and a device reopens it at most once per
  period. A load never gets a runtime that is being closed: it holds the runtime from before
  its lookup to the end of the load, and the retirement takes the runtime out of sight before
  it looks for holders (then puts it back if it finds one).

  ## Options

    * `:idle_ms` - the idle period for this call (#{@idle_expected}); default the application's
      `:shared_runtime_idle_ms`. `idle_ms: 0` closes every shared runtime nothing uses now

  ## Examples

  A shared runtime no model uses is closed; the next `shared/1` opens a fresh one:

      iex> {:ok, rt} = HexagonTpu.Runtime.shared(backend: :reference, log_level: :error)
      iex> {:ok, closed} = HexagonTpu.Runtime.close_idle_shared(idle_ms: 0)
      iex> closed >= 1
      true
      iex> {:ok, fresh} = HexagonTpu.Runtime.shared(backend: :reference, log_level: :error)
      iex> fresh.ref == rt.ref
      false
  """
  @spec close_idle_shared(keyword()) :: {:ok, non_neg_integer()} | {:error, Error.t()}
  def close_idle_shared(opts \\ []), do: Retirement.close_idle(opts)

  @doc false
  # The tests read it; HexagonTpu.KeyLock asks Runtime.Retirement.
  defdelegate sweep_interval_ms, to: Retirement, as: :interval_ms

  @doc """
  Drops this handle's reference. The libraries are unloaded once no context (or graph) opened
  on the runtime remains. Idempotent; later use of the handle gives a `:closed` error.

  ## Examples

  A context keeps its runtime: closing the runtime first leaves the context usable.

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> ctx = HexagonTpu.Context.load!(rt, "add.bin")
      iex> HexagonTpu.Runtime.close(rt)
      :ok
      iex> {:ok, _graph} = HexagonTpu.Graph.open(ctx, graph: "add_f32")
      iex> {:error, error} = HexagonTpu.Context.load(rt, "add.bin")
      iex> error.reason
      :closed
  """
  @spec close(t()) :: :ok
  def close(%__MODULE__{ref: ref}), do: NIF.runtime_close(ref)

  @doc """
  What the loader found and the device reports, read now (the struct's `:info` is the same map
  as read at open):

    * `:backend_lib`, `:system_lib`, `:provider_name`, `:backend_id`, `:core_api_version`,
      `:backend_api_version` (`{major, minor, patch}`), `:build_id`, `:system_provider_name`,
      `:system_api_version`, `:has_device`, `:dsp_library_path`
    * `:device_arch` (68 = v68), `:device_soc_model`, `:device_vtcm_bytes` (VTCM in bytes) -
      what the HTP device reports (0 = unknown)
    * `:perf_profile` - the runtime's current profile (`open/1`, `set_perf_profile/2`);
      `:has_perf_infrastructure` - whether power votes are possible at all
    * `:has_shared_memory` - whether FastRPC shared buffers can be registered;
      `:shared_memory_note` - why not, or why an allocation fell back to ordinary memory
      (`nil` when there is nothing to say)
    * `:startup_attempts` - backend/device creation attempts it took (1 = no retry)
    * `:log_note` - why the runtime has no QNN log (`nil` when it has one): QNN's logCreate
      failed (the real HTP library does so when no DSP is reachable), so the runtime runs
      without a log handle, as QNN allows, and error messages carry no QNN log lines

  A closed runtime gives the map read at open.

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> info = HexagonTpu.Runtime.info(rt)
      iex> {info.provider_name, info.backend_api_version, info.has_shared_memory}
      {"HTPU_REFERENCE", {5, 42, 0}, true}
  """
  @spec info(t()) :: map()
  def info(%__MODULE__{ref: ref, info: info}) do
    case NIF.runtime_info(ref) do
      {:ok, live} -> live
      {:error, _} -> info
    end
  end

  @doc """
  Changes the runtime's performance profile (the vote is replaced; `:default` releases it).
  Returns `{:error, %HexagonTpu.Error{reason: :invalid_option}}` for an unknown name and
  `:unsupported` when the backend has no perf infrastructure (anything but `:default`).

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> HexagonTpu.Runtime.set_perf_profile(rt, :burst)
      :ok
      iex> HexagonTpu.Runtime.info(rt).perf_profile
      :burst
      iex> {:error, error} = HexagonTpu.Runtime.set_perf_profile(rt, :turbo)
      iex> error.reason
      :invalid_option
  """
  @spec set_perf_profile(t(), perf_profile()) :: :ok | {:error, Error.t()}
  def set_perf_profile(%__MODULE__{ref: ref}, profile) do
    with {:ok, p} <- Perf.validate(profile, "HexagonTpu.Runtime.set_perf_profile/2") do
      Error.wrap(NIF.runtime_set_perf_profile(ref, p))
    end
  end

  def set_perf_profile(other, _profile),
    do:
      {:error,
       Error.new(:invalid_argument, "expected a %HexagonTpu.Runtime{}, got #{inspect(other)}")}

  @doc """
  Like `set_perf_profile/2`, raising `HexagonTpu.Error`.

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference, perf_profile: :burst)
      iex> HexagonTpu.Runtime.set_perf_profile!(rt, :default)
      :ok
      iex> HexagonTpu.Runtime.close(rt)
      :ok
      iex> HexagonTpu.Runtime.set_perf_profile!(rt, :burst)
      ** (HexagonTpu.Error) closed: the runtime is closed
  """
  @spec set_perf_profile!(t(), perf_profile()) :: :ok
  def set_perf_profile!(runtime, profile) do
    case set_perf_profile(runtime, profile) do
      :ok -> :ok
      {:error, error} -> raise error
    end
  end

  @doc """
  The performance profile names, highest performance first (`:default` last).

  ## Examples

      iex> HexagonTpu.Runtime.perf_profiles() |> Enum.take(3)
      [:burst, :sustained_high_performance, :high_performance]
      iex> List.last(HexagonTpu.Runtime.perf_profiles())
      :default
  """
  @spec perf_profiles() :: [perf_profile()]
  def perf_profiles, do: @perf_profiles

  @doc """
  Path of a file shipped in this package's `priv/` (the reference libraries, the builder).

  ## Examples

  The reference builder makes a model from its text (`examples/add.txt` here; the format:
  [docs/reference-format.md](docs/reference-format.md)):

      iex> refbuild = HexagonTpu.Runtime.priv_path("htpu-refbuild")
      iex> {_, 0} = System.cmd(refbuild, ["add.txt", "add_copy.bin"])
      iex> File.read!("add_copy.bin") == File.read!("add.bin")
      true
  """
  @spec priv_path(String.t()) :: String.t()
  def priv_path(file), do: OpenOptions.priv_path(file)
end
