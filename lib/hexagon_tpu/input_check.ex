defmodule HexagonTpu.InputCheck do
  # Every input the package takes is checked here against its TensorInfo, for every caller:
  # HexagonTpu.Graph.execute/3 and HexagonTpu.SharedIO.write_input/4 (one input, the tensor
  # itself), HexagonTpu.predict_batch/3 and a HexagonTpu.Serving request (n >= 1 rows of the
  # graph's batch). The list, each input's kind, type, shape or rows, and size; an error names
  # the graph, the input and what was expected, in one wording whoever asked (prefixed with the
  # caller's `where`). Inputs that pass come back in the form the caller hands on: a binary
  # with its element type for the NIF, or an Nx tensor of one type for an Nx.Batch.
  @moduledoc false

  alias HexagonTpu.{Error, TensorInfo}

  @compile {:no_warn_undefined, [Nx]}

  defstruct [:graph, where: nil, quantize: :auto, rows: nil, types: :convert, to: :binary]

  @typedoc """
  What a call checks against:

    * `:graph` - the graph's name, for messages; `:where` - the public function, or nil
    * `:quantize` - `:auto` (f32 data, quantized by the core) or `:none` (the tensor's own type)
    * `:rows` - nil: an input is one tensor of the graph's shape; a batch `b`: an input is
      n >= 1 rows of the graph's shape, whose leading dimension is `b` (HexagonTpu.Batching)
    * `:types` - which Nx types are taken: `:convert`: the tensor's own type, or f32 (any other
      float type converted) where f32 is taken (quantize: :auto, or an f32 tensor); `:single`:
      one type per serving, so requests merge into one batch: f32 (other floats converted)
      with quantize: :auto, the tensor's own with :none
    * `:to` - `:binary` (the bytes, for the NIF) or `:tensor` (an Nx tensor, for an Nx.Batch)
  """
  @type t :: %__MODULE__{
          graph: String.t(),
          where: String.t() | nil,
          quantize: :auto | :none,
          rows: pos_integer() | nil,
          types: :convert | :single,
          to: :binary | :tensor
        }

  @doc """
  `inputs` if it is a proper list of as many inputs as `infos`; else an `:invalid_argument`
  (not a list, an improper list) or `:mismatch` (the count) error.
  """
  @spec list(t(), [TensorInfo.t()], term()) :: {:ok, list()} | {:error, Error.t()}
  def list(check, infos, inputs) when is_list(inputs) do
    # length/1 raises on an improper list
    cond do
      List.improper?(inputs) ->
        {:error,
         Error.new(
           :invalid_argument,
           "#{prefix(check)}graph '#{check.graph}': expected a proper list of inputs, got the " <>
             "improper list #{inspect(inputs, limit: 5)}"
         )}

      length(inputs) != length(infos) ->
        {:error,
         Error.new(
           :mismatch,
           "#{prefix(check)}graph '#{check.graph}' expects #{length(infos)} input(s) " <>
             "(#{Enum.map_join(infos, ", ", & &1.name)}), got #{length(inputs)}"
         )}

      true ->
        {:ok, inputs}
    end
  end

  def list(check, _infos, other) do
    {:error,
     Error.new(
       :invalid_argument,
       "#{prefix(check)}graph '#{check.graph}': expected a list of inputs, got " <>
         inspect(other, limit: 5)
     )}
  end

  @doc """
  `list/3`, then `input/4` of each input, in one pass: `{:ok, [{data, dtype}]}` for one tensor
  each (the NIF's input list), `{:ok, [{data, dtype, rows}]}` with `check.rows`; or the first
  error.
  """
  @spec all(t(), [TensorInfo.t()], term()) :: {:ok, [tuple()]} | {:error, Error.t()}
  def all(check, infos, inputs) do
    with {:ok, inputs} <- list(check, infos, inputs), do: each(check, infos, inputs, 0, [])
  end

  defp each(_check, [], [], _i, acc), do: {:ok, :lists.reverse(acc)}

  defp each(check, [info | infos], [x | xs], i, acc) do
    case input(check, info, i, x) do
      {:ok, data, dtype, nil} -> each(check, infos, xs, i + 1, [{data, dtype} | acc])
      {:ok, data, dtype, rows} -> each(check, infos, xs, i + 1, [{data, dtype, rows} | acc])
      error -> error
    end
  end

  @doc """
  Checks input `i` against `info`: `{:ok, data, dtype, rows}` with `data` a binary or an Nx
  tensor (`check.to`) whose elements are of `dtype` (`info.dtype`, or `:f32` to quantize) and
  `rows` its rows (nil for one tensor), or a `:mismatch` error whose `:tensor` is the input's.
  """
  @spec input(t(), TensorInfo.t(), non_neg_integer(), term()) ::
          {:ok, binary() | struct(), TensorInfo.dtype(), pos_integer() | nil}
          | {:error, Error.t()}
  def input(check, info, i, %{__struct__: Nx.Tensor} = t) do
    # Reading a tensor needs its backend, not the :nx application environment; whatever Nx
    # raises on a tensor it cannot read is a returned error.
    if HexagonTpu.Optional.available?(Nx) do
      try do
        tensor(check, info, t)
      rescue
        e -> {:error, "Nx could not read the tensor (#{Exception.message(e)})"}
      end
    else
      {:error, "got an Nx tensor but Nx is not loaded"}
    end
    |> named(check, info, i)
  end

  def input(check, info, i, bin) when is_binary(bin),
    do: check |> binary(info, bin) |> named(check, info, i)

  def input(check, info, i, other),
    do:
      named(
        {:error, "expected an Nx tensor or a binary, got #{inspect(other, limit: 5)}"},
        check,
        info,
        i
      )

  @doc """
  `{:ok, rows}` when every input has the same rows (`rows` one per input, in graph-input
  order), else a `:mismatch` error naming two that differ.
  """
  @spec same_rows(t(), [TensorInfo.t()], [pos_integer()]) ::
          {:ok, pos_integer()} | {:error, Error.t()}
  def same_rows(check, infos, [rows | _] = all) do
    case Enum.uniq_by(Enum.zip(infos, all), &elem(&1, 1)) do
      [_] ->
        {:ok, rows}

      [{a, ra}, {b, rb} | _] ->
        {:error,
         Error.new(
           :mismatch,
           "#{prefix(check)}graph '#{check.graph}': the inputs have different numbers of " <>
             "rows: '#{a.name}' #{ra}, '#{b.name}' #{rb}"
         )}
    end
  end

  @doc "How a batch of rows of `shape` is written in messages: `{n, 64} (n >= 1 rows of ...)`."
  @spec rows_shape(tuple()) :: String.t()
  def rows_shape(shape) do
    dims = shape |> Tuple.delete_at(0) |> Tuple.to_list() |> Enum.map(&Integer.to_string/1)
    "{" <> Enum.join(["n" | dims], ", ") <> "} (n >= 1 rows of the graph's #{inspect(shape)})"
  end

  # ---- an Nx tensor ---------------------------------------------------------------------------

  defp tensor(check, info, t) do
    type = Nx.type(t)
    shape = Nx.shape(t)

    with :ok <- tensor_shape(check, info, t, shape),
         {:ok, to_type, dtype} <- tensor_type(check, info, type) do
      data =
        case check.to do
          :binary when to_type == type -> Nx.to_binary(t)
          :binary -> t |> Nx.as_type(to_type) |> Nx.to_binary()
          :tensor when to_type == type -> t
          :tensor -> Nx.as_type(t, to_type)
        end

      {:ok, data, dtype, check.rows && elem(shape, 0)}
    end
  end

  defp tensor_shape(check, info, t, shape) do
    cond do
      match?(%{vectorized_axes: [_ | _]}, t) ->
        {:error, "got a vectorized tensor (#{inspect(t.vectorized_axes)}): #{vectorized(check)}"}

      check.rows == nil and shape != info.shape ->
        {:error, "expected shape #{inspect(info.shape)}, got #{inspect(shape)}"}

      check.rows != nil and not rows_shape?(shape, info.shape) ->
        {:error, "expected shape #{rows_shape(info.shape)}, got #{inspect(shape)}"}

      true ->
        :ok
    end
  end

  defp vectorized(%{rows: nil}),
    do:
      "one buffer holds one entry; write each entry, or pass the vectorized tensor to " <>
        "HexagonTpu.predict/3"

  defp vectorized(_rows),
    do:
      "put the rows on the leading axis (Nx.devectorize/2); HexagonTpu.predict/3 takes " <>
        "vectorized tensors"

  # {n, d1, d2, ...} with n >= 1 and the rest the graph's own.
  defp rows_shape?(shape, graph_shape) do
    tuple_size(shape) == tuple_size(graph_shape) and tuple_size(shape) > 0 and
      elem(shape, 0) > 0 and Tuple.delete_at(shape, 0) == Tuple.delete_at(graph_shape, 0)
  end

  # {:ok, the Nx type the data goes on in, its dtype} or {:error, what}.
  defp tensor_type(check, info, type) do
    own? = check.types == :convert or check.quantize == :none

    f32? = check.quantize == :auto or (check.types == :convert and info.type == {:f, 32})

    cond do
      own? and type == info.type -> {:ok, type, info.dtype}
      f32? and type == {:f, 32} -> {:ok, type, :f32}
      f32? and elem(type, 0) in [:f, :bf] -> {:ok, {:f, 32}, :f32}
      true -> {:error, type_error(info, type, own?, f32?)}
    end
  end

  defp type_error(info, type, own?, f32?) do
    own = inspect(info.type)

    cond do
      f32? and (not own? or info.type == {:f, 32}) ->
        # A serving with quantize: :auto takes floats only; :none its own type.
        serving =
          if info.type != {:f, 32},
            do: "; with quantize: :none the input's own type #{own} is taken",
            else: ""

        "expected a float type ({:f, 32}; {:f, 64}, {:f, 16} and {:bf, 16} are converted), " <>
          "got #{inspect(type)}: convert it with Nx.as_type(tensor, {:f, 32})#{serving}"

      f32? ->
        "expected type #{own} (or {:f, 32} to quantize), got #{inspect(type)}: use " <>
          "Nx.as_type(tensor, #{own}) if it holds #{own} values, or a float type (any float " <>
          "tensor is converted to f32 and quantized) if it holds real values"

      true ->
        "expected type #{own}, got #{inspect(type)}: with quantize: :none inputs are in the " <>
          "tensor's own type (Nx.as_type(tensor, #{own})); quantize: :auto quantizes float " <>
          "tensors"
    end
  end

  # ---- a binary of native-endian elements ------------------------------------------------------

  defp binary(check, info, bin) do
    dtype = if check.quantize == :none, do: info.dtype, else: :f32
    size = TensorInfo.element_size(dtype)

    case check.rows do
      nil -> one_binary(check, info, bin, dtype, info.num_elements * size)
      batch -> rows_binary(check, info, bin, dtype, div(info.num_elements, batch), size)
    end
  end

  defp one_binary(check, info, bin, dtype, want) do
    if byte_size(bin) == want do
      {:ok, as(check, bin, info, dtype, info.shape), dtype, nil}
    else
      hint =
        if check.quantize == :auto and byte_size(bin) == info.byte_size,
          do:
            ": the size of #{info.dtype} data; pass quantize: :none for data in the " <>
              "tensor's own type",
          else: ""

      {:error,
       "expected #{want} bytes (#{info.num_elements} #{dtype} elements of shape " <>
         "#{inspect(info.shape)}), got #{byte_size(bin)}#{hint}"}
    end
  end

  defp rows_binary(check, info, bin, dtype, per_row, size) do
    row_bytes = per_row * size

    if row_bytes > 0 and byte_size(bin) > 0 and rem(byte_size(bin), row_bytes) == 0 do
      rows = div(byte_size(bin), row_bytes)
      {:ok, as(check, bin, info, dtype, put_elem(info.shape, 0, rows)), dtype, rows}
    else
      {:error,
       "expected a whole number (>= 1) of rows of #{row_bytes} bytes (#{per_row} #{dtype} " <>
         "elements each: shape #{rows_shape(info.shape)}), got #{byte_size(bin)} bytes"}
    end
  end

  defp as(%{to: :binary}, bin, _info, _dtype, _shape), do: bin

  defp as(%{to: :tensor}, bin, info, dtype, shape) do
    type = if dtype == :f32, do: {:f, 32}, else: info.type
    bin |> Nx.from_binary(type) |> Nx.reshape(shape)
  end

  # ---- errors ---------------------------------------------------------------------------------

  defp named({:error, what}, check, info, i) when is_binary(what) do
    {:error,
     Error.new(
       :mismatch,
       "#{prefix(check)}graph '#{check.graph}' input '#{info.name}' (#{i}): #{what}",
       tensor: info.name
     )}
  end

  defp named(ok, _check, _info, _i), do: ok

  defp prefix(%{where: nil}), do: ""
  defp prefix(%{where: where}), do: where <> ": "
end
