defmodule HexagonTpu.NIF do
  # The NIF (c_src/hexagon_tpu_nif.c): a thin client of include/hexagon_tpu.h. Arguments are
  # validated by the public modules before they get here; the scheduler each function runs on
  # is chosen (and explained) where it is registered in C.
  @moduledoc false

  @on_load :load_nif

  @doc false
  def load_nif do
    case :code.priv_dir(:hexagon_tpu) do
      {:error, reason} ->
        {:error, {:no_priv_dir, reason}}

      priv ->
        :erlang.load_nif(:filename.join(priv, ~c"hexagon_tpu_nif"), 0)
    end
  end

  def runtime_open(_options), do: :erlang.nif_error(:not_loaded)
  def runtime_close(_runtime), do: :erlang.nif_error(:not_loaded)
  def runtime_info(_runtime), do: :erlang.nif_error(:not_loaded)
  def runtime_set_perf_profile(_runtime, _profile), do: :erlang.nif_error(:not_loaded)
  def runtime_usage(_runtime), do: :erlang.nif_error(:not_loaded)
  def context_open_file(_runtime, _path), do: :erlang.nif_error(:not_loaded)
  def context_open_binary(_runtime, _binary), do: :erlang.nif_error(:not_loaded)
  def context_close(_context), do: :erlang.nif_error(:not_loaded)
  def graph_open(_context, _name), do: :erlang.nif_error(:not_loaded)
  def graph_close(_graph), do: :erlang.nif_error(:not_loaded)

  def graph_execute(_graph, _inputs, _output_types, _perf_profile),
    do: :erlang.nif_error(:not_loaded)

  def graph_execute_normal(_graph, _inputs, _output_types, _perf_profile, _mode),
    do: :erlang.nif_error(:not_loaded)

  def graph_timing(_graph), do: :erlang.nif_error(:not_loaded)

  def graph_execute_batch(_graph, _inputs, _output_types, _perf_profile, _chunks),
    do: :erlang.nif_error(:not_loaded)

  def graph_execute_shared(_graph, _shared, _perf_profile), do: :erlang.nif_error(:not_loaded)
  def graph_alloc_io(_graph, _env), do: :erlang.nif_error(:not_loaded)
  def shared_write(_shared, _slot, _binary, _mode), do: :erlang.nif_error(:not_loaded)
  def shared_read(_shared, _slot, _mode), do: :erlang.nif_error(:not_loaded)
  def shared_close(_shared), do: :erlang.nif_error(:not_loaded)
  def handle_alive(_ref), do: :erlang.nif_error(:not_loaded)
  def stats, do: :erlang.nif_error(:not_loaded)
  def set_max_binary_bytes(_bytes), do: :erlang.nif_error(:not_loaded)
  def max_binary_bytes, do: :erlang.nif_error(:not_loaded)
  def close_all(_wait_ms), do: :erlang.nif_error(:not_loaded)

  # profiles (c_src/profile.c)
  def graph_execute_profiled(_graph, _inputs, _output_types, _perf, _level, _max_events, _chunks),
    do: :erlang.nif_error(:not_loaded)

  def profile_write(_profile_ref, _kind, _path, _title), do: :erlang.nif_error(:not_loaded)
end
