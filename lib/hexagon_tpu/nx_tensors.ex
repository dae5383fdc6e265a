defmodule HexagonTpu.NxTensors do
  # Nx outputs, for HexagonTpu.Graph, HexagonTpu.Batching and HexagonTpu.SharedIO (Nx inputs are
  # HexagonTpu.InputCheck's). Nx is optional: nothing here is called unless Nx outputs were asked
  # for, and every Nx failure comes back as an {:error, %HexagonTpu.Error{}} instead of raising
  # out of an execute.
  @moduledoc false

  alias HexagonTpu.{Error, TensorInfo}

  @compile {:no_warn_undefined, [Nx]}

  @doc """
  Is Nx usable: its modules loadable and the :nx application loaded (Nx reads its default
  backend from the application environment; hexagon_tpu starts :nx, an optional application,
  when it is present)?
  """
  @spec usable?() :: boolean()
  def usable?, do: HexagonTpu.Optional.available?(Nx) and Application.spec(:nx, :vsn) != nil

  @doc """
  What `:output` resolves to: `:nx` (`:auto` when Nx is loadable) or `:binary`. Nx loadable
  without its application is an error that says what to do, not outputs that Nx cannot build.
  """
  @spec output_kind(:auto | :nx | :binary, String.t()) ::
          {:ok, :nx | :binary} | {:error, Error.t()}
  def output_kind(:binary, _where), do: {:ok, :binary}

  def output_kind(which, where) when which in [:auto, :nx] do
    cond do
      usable?() ->
        {:ok, :nx}

      which == :auto and not HexagonTpu.Optional.available?(Nx) ->
        {:ok, :binary}

      which == :nx and not HexagonTpu.Optional.available?(Nx) ->
        {:error,
         Error.new(
           :invalid_option,
           "#{where}: expected :output to be :auto or :binary (:nx needs Nx, which is not " <>
             "loaded), got :nx"
         )}

      true ->
        {:error, Error.new(:nx_error, "#{where}: #{not_started()}")}
    end
  end

  defp not_started do
    "Nx is loadable but the :nx application is not loaded, so Nx cannot build the outputs: " <>
      "start it (Application.ensure_all_started(:nx); a Mix project that depends on :nx and " <>
      "hexagon_tpu does this itself) or pass output: :binary"
  end

  @doc "Is `t` an Nx tensor with vectorized axes?"
  @spec vectorized?(term()) :: boolean()
  def vectorized?(%{__struct__: Nx.Tensor, vectorized_axes: [_ | _]}), do: true
  def vectorized?(_), do: false

  @doc """
  An output's bytes (in `dtype`) as an Nx tensor of the output's shape, or an
  `{:error, %HexagonTpu.Error{reason: :nx_error}}` naming the output when Nx fails.
  """
  @spec output(binary(), TensorInfo.t(), TensorInfo.dtype(), String.t()) ::
          {:ok, struct()} | {:error, Error.t()}
  def output(bin, info, dtype, graph) do
    if 0 in Tuple.to_list(info.shape) do
      # an output with dynamic dimensions that came out empty: Nx has no empty tensors
      {:error,
       Error.new(
         :nx_error,
         "graph '#{graph}' output '#{info.name}' came out empty (shape " <>
           "#{inspect(info.shape)}), and Nx has no empty tensors; output: :binary returns it " <>
           "(an empty binary, its shape in the stats' :output_shapes)",
         tensor: info.name
       )}
    else
      {:ok, bin |> Nx.from_binary(TensorInfo.nx_type(dtype)) |> Nx.reshape(info.shape)}
    end
  rescue
    e ->
      {:error,
       Error.new(
         :nx_error,
         "graph '#{graph}' output '#{info.name}': Nx could not build the tensor " <>
           "(#{Exception.message(e)}); output: :binary returns the bytes",
         tensor: info.name
       )}
  end
end
