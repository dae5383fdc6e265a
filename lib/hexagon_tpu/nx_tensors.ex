defmodule HexagonTpu.NxTensors do
  # Nx tensors in and out, for HexagonTpu.Graph and HexagonTpu.SharedIO. Nx is optional: nothing
  # here is called unless an Nx tensor was given or Nx outputs were asked for, and every Nx
  # failure comes back as an {:error, %HexagonTpu.Error{}} instead of raising out of an execute.
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

  @doc """
  The bytes of `t` for the graph input described by `info`: `{:ok, binary, :raw}` (in the
  tensor's own type) or `{:ok, binary, :quantize}` (f32, for the C core to quantize), or
  `{:error, what}` saying what was wrong and what to do.

  Any float type (`{:f, 64}`, `{:f, 16}`, `{:bf, 16}`) for an input that takes f32 (every
  input with `quantize: :auto`; an f32 input always) is converted to f32 in one pass; other
  types must be the input's own.
  """
  @spec input_binary(struct(), TensorInfo.t(), :auto | :none) ::
          {:ok, binary(), :raw | :quantize} | {:error, String.t()}
  def input_binary(t, info, quantize) do
    # Reading a tensor needs its backend, not the :nx application environment.
    if HexagonTpu.Optional.available?(Nx) do
      try do
        check_input(t, info, quantize)
      rescue
        e -> {:error, "Nx could not read the tensor (#{Exception.message(e)})"}
      end
    else
      {:error, "got an Nx tensor but Nx is not loaded"}
    end
  end

  defp check_input(t, info, quantize) do
    type = Nx.type(t)
    shape = Nx.shape(t)
    takes_f32 = quantize == :auto or info.type == {:f, 32}
    # f32 bytes go through the core's quantizer unless the input is f32 itself
    f32_mode = if info.type == {:f, 32}, do: :raw, else: :quantize

    cond do
      vectorized?(t) ->
        {:error,
         "got a vectorized tensor (#{inspect(t.vectorized_axes)}): one buffer holds one " <>
           "entry; write each entry, or pass the vectorized tensor to HexagonTpu.predict/3"}

      shape != info.shape ->
        {:error, "expected shape #{inspect(info.shape)}, got #{inspect(shape)}"}

      type == info.type ->
        {:ok, Nx.to_binary(t), :raw}

      type == {:f, 32} and takes_f32 ->
        {:ok, Nx.to_binary(t), f32_mode}

      float_type?(type) and takes_f32 ->
        {:ok, t |> Nx.as_type({:f, 32}) |> Nx.to_binary(), f32_mode}

      true ->
        {:error, type_error(info, type, quantize)}
    end
  end

  defp float_type?({kind, _}), do: kind in [:f, :bf]

  defp type_error(%{type: {:f, 32}}, type, _quantize) do
    "expected a float type ({:f, 32}; {:f, 64}, {:f, 16} and {:bf, 16} are converted), got " <>
      "#{inspect(type)}: convert it with Nx.as_type(tensor, {:f, 32})"
  end

  defp type_error(info, type, :auto) do
    own = inspect(info.type)

    "expected type #{own} (or {:f, 32} to quantize), got #{inspect(type)}: use " <>
      "Nx.as_type(tensor, #{own}) if it holds #{own} values, or a float type (any float " <>
      "tensor is converted to f32 and quantized) if it holds real values"
  end

  defp type_error(info, type, :none) do
    own = inspect(info.type)

    "expected type #{own}, got #{inspect(type)}: with quantize: :none inputs are in the " <>
      "tensor's own type (Nx.as_type(tensor, #{own})); quantize: :auto quantizes float tensors"
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
    {:ok, bin |> Nx.from_binary(TensorInfo.nx_type(dtype)) |> Nx.reshape(info.shape)}
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
