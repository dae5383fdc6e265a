defmodule HexagonTpu.NIF do
  # The NIF (c_src/hexagon_tpu_nif.c): a thin client of include/hexagon_tpu.h. Arguments are
  # validated by the public modules before they get here; the scheduler each function runs on
  # is chosen (and explained) where it is registered in C.
  #
  # When the library is loaded (docs/nerves.md, "A quiet target build"):
  #  - never by the compiler: `autoload: false` keeps the Elixir compiler from loading this
  #    module after compiling it, so a build (a Nerves target build on the host included, whose
  #    priv/ holds an aarch64 .so) never runs on_load and logs nothing;
  #  - when the module is first loaded: the application's start (HexagonTpu.Application), a
  #    release's boot (embedded mode loads every module), or the first call;
  #  - a first load that fails (no .so, a broken one, one for another machine) still loads the
  #    module, quietly: every function then raises a HexagonTpu.Error (:nif_not_loaded) naming
  #    the file and the reason, and the application refuses to start with the same message;
  #  - a new version of this module (a hot upgrade) whose library cannot be loaded fails its
  #    on_load, so the old code and library stay in use (the C side refuses a different .so:
  #    nif_upgrade). This is why the load is on_load and not made lazily by the first call, as
  #    some libraries do: a lazy load would make the new code current before its library is
  #    known to load, and every call would fail until a restart.
  @moduledoc false

  @on_load :load_nif
  @compile {:autoload, false}

  @error_key {__MODULE__, :load_error}

  @doc false
  def load_nif do
    case :code.priv_dir(:hexagon_tpu) do
      {:error, reason} ->
        loaded({:error, {:no_priv_dir, reason}}, "(no priv directory for :hexagon_tpu)")

      priv ->
        path = :filename.join(priv, ~c"hexagon_tpu_nif")
        loaded(:erlang.load_nif(path, 0), "#{path}.so")
    end
  end

  # on_load's answer. A first load always succeeds (the error is kept for status/0 and the
  # functions below); an upgrade passes the error on, so ERTS keeps the old code.
  defp loaded(:ok, _file) do
    if :persistent_term.get(@error_key, nil), do: :persistent_term.erase(@error_key)
    :ok
  end

  defp loaded({:error, reason} = error, file) do
    if :erlang.module_loaded(__MODULE__) do
      error
    else
      :persistent_term.put(@error_key, message(reason, file))
      :ok
    end
  end

  defp message({:no_priv_dir, reason}, file),
    do: "the hexagon_tpu NIF cannot be found #{file}: #{inspect(reason)}"

  defp message({_kind, text}, file) do
    "the hexagon_tpu NIF #{file} could not be loaded: #{text}#{machine(file)}. " <>
      "It is built into priv/ by `mix compile` (make and a C compiler), or installed from a " <>
      "precompiled archive (HEXAGON_TPU_PRECOMPILED, docs/nerves.md); one built for another " <>
      "machine (MIX_TARGET) loads only there"
  end

  # glibc reports a shared object for another machine as "cannot open shared object file: No
  # such file or directory" although the file is there: say what the file is.
  @elf_machines %{3 => "x86", 40 => "ARM", 62 => "x86-64", 183 => "AArch64", 243 => "RISC-V"}

  defp machine(file) do
    case File.open(file, [:read, :binary], &IO.binread(&1, 20)) do
      {:ok, <<0x7F, "ELF", _::binary-size(12), _type::16, m::little-16>>} ->
        " (the file is an ELF object for #{Map.get(@elf_machines, m, "machine #{m}")}; this VM " <>
          "runs on #{:erlang.system_info(:system_architecture)})"

      _ ->
        ""
    end
  end

  @doc false
  # :ok when the library is loaded, else {:error, message}. Loads this module (and so the
  # library) if nothing has yet. For HexagonTpu.Application.start/2.
  @spec status() :: :ok | {:error, String.t()}
  def status do
    case Code.ensure_loaded(__MODULE__) do
      {:module, _} ->
        case :persistent_term.get(@error_key, nil) do
          nil -> :ok
          message -> {:error, message}
        end

      {:error, reason} ->
        {:error, "the module #{inspect(__MODULE__)} could not be loaded: #{inspect(reason)}"}
    end
  end

  # What every function raises while the library is not loaded (its first load failed), through
  # :erlang.nif_error/1, which raises its argument as error/1 does (an exception struct is
  # raised as itself). Through nif_error, not `raise`: type checkers (Dialyzer, Elixir 1.18's)
  # take a function that calls it for a NIF stub whose real result is unknown, not for one
  # that never returns.
  defp not_loaded do
    message =
      :persistent_term.get(
        @error_key,
        "the hexagon_tpu NIF is not loaded (#{inspect(__MODULE__)})"
      )

    HexagonTpu.Error.new(:nif_not_loaded, message)
  end

  def runtime_open(_options), do: :erlang.nif_error(not_loaded())
  def runtime_close(_runtime), do: :erlang.nif_error(not_loaded())
  def runtime_info(_runtime), do: :erlang.nif_error(not_loaded())
  def runtime_set_perf_profile(_runtime, _profile), do: :erlang.nif_error(not_loaded())
  def runtime_usage(_runtime), do: :erlang.nif_error(not_loaded())
  def context_open_file(_runtime, _path), do: :erlang.nif_error(not_loaded())
  def context_open_binary(_runtime, _binary), do: :erlang.nif_error(not_loaded())
  def context_open_file(_runtime, _path, _load_opts), do: :erlang.nif_error(not_loaded())
  def context_open_binary(_runtime, _binary, _load_opts), do: :erlang.nif_error(not_loaded())
  def context_open_many(_runtime, _requests), do: :erlang.nif_error(not_loaded())
  def context_load_info(_context), do: :erlang.nif_error(not_loaded())
  def context_close(_context), do: :erlang.nif_error(not_loaded())
  def context_memory(_context), do: :erlang.nif_error(not_loaded())
  def graph_open(_context, _name), do: :erlang.nif_error(not_loaded())
  def graph_close(_graph), do: :erlang.nif_error(not_loaded())

  def graph_execute(_graph, _inputs, _output_types, _perf_profile),
    do: :erlang.nif_error(not_loaded())

  def graph_execute_normal(_graph, _inputs, _output_types, _perf_profile, _mode),
    do: :erlang.nif_error(not_loaded())

  def graph_execute_normal(_graph, _inputs, _output_types, _perf_profile, _mode, _profile),
    do: :erlang.nif_error(not_loaded())

  def graph_timing(_graph), do: :erlang.nif_error(not_loaded())

  # submitted calls (c_src/submit.c)
  def graph_submit(_graph, _inputs, _output_types, _opts, _tag),
    do: :erlang.nif_error(not_loaded())

  def call_cancel(_call), do: :erlang.nif_error(not_loaded())
  def call_claim(_call), do: :erlang.nif_error(not_loaded())
  def call_stats(_call), do: :erlang.nif_error(not_loaded())
  def call_error(_call), do: :erlang.nif_error(not_loaded())
  def graph_batch_multiple(_graph), do: :erlang.nif_error(not_loaded())
  # the reference backend's control API, for tests and benches (c_src/ref_control.c)
  def ref_control(_backend_lib, _op), do: :erlang.nif_error(not_loaded())

  def graph_execute_batch(_graph, _inputs, _output_types, _perf_profile, _chunks),
    do: :erlang.nif_error(not_loaded())

  def graph_execute_shared(_graph, _shared, _perf_profile, _profile),
    do: :erlang.nif_error(not_loaded())

  def graph_alloc_io(_graph, _env), do: :erlang.nif_error(not_loaded())
  def shared_write(_shared, _slot, _binary, _mode), do: :erlang.nif_error(not_loaded())
  def shared_read(_shared, _slot, _mode), do: :erlang.nif_error(not_loaded())
  def shared_close(_shared), do: :erlang.nif_error(not_loaded())
  def handle_alive(_ref), do: :erlang.nif_error(not_loaded())
  def stats, do: :erlang.nif_error(not_loaded())
  # the board's thermal zones and cpufreq policies (c_src/board.c)
  def board_read(_root), do: :erlang.nif_error(not_loaded())
  def set_max_binary_bytes(_bytes), do: :erlang.nif_error(not_loaded())
  def max_binary_bytes, do: :erlang.nif_error(not_loaded())
  def close_all(_wait_ms), do: :erlang.nif_error(not_loaded())

  # profiles (c_src/profile.c)
  def graph_execute_profiled(_graph, _inputs, _output_types, _opts, _level, _max_events, _chunks),
    do: :erlang.nif_error(not_loaded())

  def runtime_profile_caps(_runtime), do: :erlang.nif_error(not_loaded())

  def profile_write(_profile_ref, _kind, _path, _title), do: :erlang.nif_error(not_loaded())
  def profile_events(_profile_ref), do: :erlang.nif_error(not_loaded())

  # vision (c_src/vision.c)
  def vision_preprocess(_graph, _frame, _opts), do: :erlang.nif_error(not_loaded())

  def vision_decode(_graph, _outputs, _opts, _geometry, _labels, _kind),
    do: :erlang.nif_error(not_loaded())

  def vision_detect(_graph, _frame, _pre, _dec, _call, _shared, _labels, _kind),
    do: :erlang.nif_error(not_loaded())
end
