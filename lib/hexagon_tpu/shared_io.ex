defmodule HexagonTpu.SharedIO do
  @moduledoc """
  Preallocated input and output buffers of one graph, in memory the DSP reads and writes
  directly (FastRPC shared memory), for executes without copies.

  `HexagonTpu.Graph.alloc_io/1` lays every input and output of the graph out in one shared
  buffer (the C core's `htpu_graph_alloc_io`). You write the inputs into it, execute with it
  (`HexagonTpu.predict/3` / `HexagonTpu.Graph.execute/3` take the `SharedIO` in place of the
  input list) and read the outputs from it:

      {:ok, io} = HexagonTpu.Graph.alloc_io(model)
      :ok = HexagonTpu.SharedIO.write_input(io, 0, image_f32)   # quantized into the buffer
      {:ok, ^io} = HexagonTpu.predict(model, io)
      {:ok, scores} = HexagonTpu.SharedIO.read_output(io, 0)    # dequantized f32 copy
      {:ok, raw} = HexagonTpu.SharedIO.read_output(io, 0, view: true, dequantize: :none)

  What is and is not copied:

    * `write_input/4` copies the data into the buffer once (in the tensor's own type), or
      quantizes f32 data straight into it (`htpu_quantize`): no scratch buffer, no copy in
      the execute.
    * The execute passes pointers into the buffer; the core registers them with the context
      once (`memRegister`) and binds the handles on every call, so FastRPC moves no tensor data.
    * `read_output/3` copies out by default (dequantizing to f32 unless `dequantize: :none`).
      With `view: true` it returns a binary that points into the buffer (no copy at all). Such a
      binary keeps the buffer alive (even after `close/1`), and **shows whatever the next
      execute or write puts there**: use it before the next execute, or `:binary.copy/1` it.

  When FastRPC memory is not available (no `libcdsprpc.so`, a backend without memory
  registration, `rpcmem_alloc` failing) the buffer is ordinary memory: everything works the
  same, with FastRPC copying per call as for ordinary inputs. `:fastrpc` says which one you got,
  `:note` why; the first such fallback of a runtime logs one warning, and
  `HexagonTpu.Runtime.info/1` reports `:shared_memory_note`.

  The buffer is freed by `close/1` or garbage collection, off the schedulers, once no view
  binary and no call in progress uses it. Use after `close/1` is a `:closed` error. A
  `SharedIO` belongs to the graph it was allocated for; its contents are not synchronized:
  writing it from one process while another executes with it gives torn data (never a crash).
  """

  alias HexagonTpu.{Error, InputCheck, NIF, NxTensors, Options, Results, TensorInfo}

  defstruct [:ref, :graph, :inputs, :outputs, :fastrpc, :note, :size]

  @type t :: %__MODULE__{
          ref: reference(),
          graph: String.t(),
          inputs: [TensorInfo.t()],
          outputs: [TensorInfo.t()],
          fastrpc: boolean(),
          note: String.t() | nil,
          size: non_neg_integer()
        }

  @typedoc "An input or output: its index or its name."
  @type tensor_ref :: non_neg_integer() | String.t()

  @write_spec %{quantize: {{:one_of, [:auto, :none]}, ":auto or :none", :auto}}

  @read_spec %{
    dequantize: {{:one_of, [:auto, :none]}, ":auto or :none", :auto},
    view: {:boolean, "a boolean", false},
    output: {{:one_of, [:auto, :nx, :binary]}, ":auto, :nx or :binary", :auto}
  }

  # read_input/3: the buffer's own contents unless told otherwise
  @read_input_defaults [dequantize: :none, output: :binary]

  @doc """
  Whether the buffer is FastRPC shared memory (`false`: the ordinary-memory fallback, whose
  reason is in `:note`).

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> io = HexagonTpu.alloc_io(model) |> elem(1)
      iex> {HexagonTpu.SharedIO.fastrpc?(io), io.note}
      {true, nil}
  """
  @spec fastrpc?(t()) :: boolean()
  def fastrpc?(%__MODULE__{fastrpc: fastrpc}), do: fastrpc

  @doc """
  Writes one input into the buffer.

  `input` is the input's index or name. `data` is a binary of native-endian elements (f32 by
  default, quantized to the tensor's type; the tensor's own type with `quantize: :none`) or an
  Nx tensor of the input's shape, in its own type or `{:f, 32}` (quantized; other float types
  are converted to f32 first, as for `HexagonTpu.Graph.execute/3`). A vectorized tensor is a
  `:mismatch` error: the buffer holds one entry. NaN cannot be quantized (`:nan` error).

  ## Examples

  f32 quantized into the u8 input (scale 0.1, zero point 128), by index or by name:

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> {:ok, io} = HexagonTpu.alloc_io(model)
      iex> x = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> HexagonTpu.SharedIO.write_input(io, "x", x)
      :ok
      iex> HexagonTpu.SharedIO.read_input(io, 0)
      {:ok, <<138, 148, 158, 168>>}
      iex> HexagonTpu.SharedIO.write_input(io, 0, <<0, 128, 255, 1>>, quantize: :none)
      :ok
      iex> {:error, error} = HexagonTpu.SharedIO.write_input(io, "y", x)
      iex> error.reason
      :invalid_argument
  """
  @spec write_input(t(), tensor_ref(), binary() | struct(), keyword()) ::
          :ok | {:error, Error.t()}
  def write_input(io, input, data, opts \\ [])

  def write_input(%__MODULE__{} = io, input, data, opts) do
    with {:ok, o} <- Options.validate(opts, @write_spec, "HexagonTpu.SharedIO.write_input/4"),
         {:ok, index, info} <- find(io, :input, input),
         check = %InputCheck{graph: io.graph, quantize: o.quantize},
         {:ok, bin, dtype, _rows} <- InputCheck.input(check, info, index, data) do
      # :nan / :mismatch from the NIF concern this input
      case Error.wrap(
             NIF.shared_write(io.ref, index, bin, write_mode(data, o.quantize, dtype, info))
           ) do
        {:error, %Error{reason: r, tensor: nil} = e} when r in [:nan, :mismatch] ->
          {:error, %{e | tensor: info.name}}

        other ->
          other
      end
    end
  end

  def write_input(other, _input, _data, _opts), do: not_shared_io(other)

  # A binary with quantize: :auto goes through the core's quantizer (also into an f32 input);
  # otherwise data in the tensor's own type is copied as it is, f32 data quantized.
  defp write_mode(bin, :auto, _dtype, _info) when is_binary(bin), do: :quantize
  defp write_mode(_data, _quantize, dtype, %{dtype: dtype}), do: :raw
  defp write_mode(_data, _quantize, _dtype, _info), do: :quantize

  @doc """
  Like `write_input/4`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> HexagonTpu.SharedIO.write_input!(io, 0, <<0, 0, 192, 127>> <> <<0::96>>)
      ** (HexagonTpu.Error) nan: input 'x': element 0 is NaN; NaN cannot be quantized to u8
  """
  @spec write_input!(t(), tensor_ref(), binary() | struct(), keyword()) :: :ok
  def write_input!(io, input, data, opts \\ []), do: ok!(write_input(io, input, data, opts))

  @doc """
  Writes every input, in graph-input order (as `HexagonTpu.predict/3` takes them). Options as
  `write_input/4`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> a = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> HexagonTpu.SharedIO.write_inputs(io, [a, a])
      :ok
      iex> {:error, error} = HexagonTpu.SharedIO.write_inputs(io, [a])
      iex> error.reason
      :mismatch
  """
  @spec write_inputs(t(), [binary() | struct()], keyword()) :: :ok | {:error, Error.t()}
  def write_inputs(io, data, opts \\ [])

  def write_inputs(%__MODULE__{inputs: infos} = io, data, opts) do
    with {:ok, data} <- InputCheck.list(%InputCheck{graph: io.graph}, infos, data) do
      data
      |> Enum.with_index()
      |> Enum.reduce_while(:ok, fn {d, i}, :ok ->
        case write_input(io, i, d, opts) do
          :ok -> {:cont, :ok}
          error -> {:halt, error}
        end
      end)
    end
  end

  def write_inputs(other, _data, _opts), do: not_shared_io(other)

  @doc """
  Reads one output (by index or name).

  ## Options

    * `:dequantize` - `:auto` (default): f32; `:none`: the tensor's own type
    * `:view` - `true`: no copy; the binary points into the shared buffer (keeping it alive) and
      changes with the next execute. Gives the tensor's own type, so it needs
      `dequantize: :none` unless the output is f32
    * `:output` - `:nx`, `:binary` or `:auto` (default: `:nx` when Nx is present), as for
      `HexagonTpu.Graph.execute/3`

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> :ok = HexagonTpu.SharedIO.write_input(io, 0, <<138, 148, 158, 168>>, quantize: :none)
      iex> {:ok, ^io} = HexagonTpu.predict(model, io)
      iex> {:ok, y} = HexagonTpu.SharedIO.read_output(io, "y", output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [1.0, 4.0, 9.0, 12.699999809265137]
      iex> HexagonTpu.SharedIO.read_output(io, 0, view: true, dequantize: :none, output: :binary)
      {:ok, <<138, 168, 218, 255>>}
  """
  @spec read_output(t(), tensor_ref(), keyword()) ::
          {:ok, binary() | struct()} | {:error, Error.t()}
  def read_output(io, output, opts \\ [])

  def read_output(%__MODULE__{} = io, output, opts), do: read(io, :output, output, opts)
  def read_output(other, _output, _opts), do: not_shared_io(other)

  @doc """
  Like `read_output/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> byte_size(HexagonTpu.SharedIO.read_output!(io, 0, output: :binary))
      16
      iex> HexagonTpu.SharedIO.read_output!(io, 0, view: true)
      ** (HexagonTpu.Error) invalid_option: HexagonTpu.SharedIO.read_output/3: view: true reads output 'y' in its own type (u8); pass dequantize: :none
  """
  @spec read_output!(t(), tensor_ref(), keyword()) :: binary() | struct()
  def read_output!(io, output, opts \\ []), do: Error.unwrap!(read_output(io, output, opts))

  @doc """
  Reads back one input as it sits in the buffer, e.g. to see the quantized values
  `write_input/4` produced. Options as `read_output/3`, but the defaults are
  `dequantize: :none, output: :binary` (a binary in the tensor's own type); options given
  replace only the defaults they name, so `read_input(io, 0, view: true)` is a view in the
  tensor's own type, and `dequantize: :auto` gives f32.

  ## Examples

  What 1.0, 2.0, 3.0 and 4.0 quantize to (scale 0.1, zero point 128), and back:

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> x = for v <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<v::float-32-native>>
      iex> :ok = HexagonTpu.SharedIO.write_input(io, 0, x)
      iex> HexagonTpu.SharedIO.read_input(io, "x")
      {:ok, <<138, 148, 158, 168>>}
      iex> {:ok, back} = HexagonTpu.SharedIO.read_input(io, 0, dequantize: :auto)
      iex> for <<v::float-32-native <- back>>, do: Float.round(v, 3)
      [1.0, 2.0, 3.0, 4.0]
  """
  @spec read_input(t(), tensor_ref(), keyword()) ::
          {:ok, binary() | struct()} | {:error, Error.t()}
  def read_input(io, input, opts \\ [])

  def read_input(%__MODULE__{} = io, input, opts),
    do: read(io, :input, input, merge_defaults(@read_input_defaults, opts))

  def read_input(other, _input, _opts), do: not_shared_io(other)

  @doc """
  Like `read_input/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "scale_u8")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> :ok = HexagonTpu.SharedIO.write_input(io, 0, <<1, 2, 3, 4>>, quantize: :none)
      iex> HexagonTpu.SharedIO.read_input!(io, 0)
      <<1, 2, 3, 4>>
      iex> HexagonTpu.SharedIO.read_input!(io, 1)
      ** (HexagonTpu.Error) invalid_argument: graph 'scale_u8' has no input 1 (1 inputs: "x")
  """
  @spec read_input!(t(), tensor_ref(), keyword()) :: binary() | struct()
  def read_input!(io, input, opts \\ []), do: Error.unwrap!(read_input(io, input, opts))

  # Options given override the defaults one by one (read_input(io, 0, view: true) keeps
  # dequantize: :none); anything not a keyword list is left for Options.validate/3 to reject.
  defp merge_defaults(defaults, opts) do
    if is_list(opts) and Keyword.keyword?(opts), do: Keyword.merge(defaults, opts), else: opts
  end

  defp read(io, which, ref, opts) do
    where = "HexagonTpu.SharedIO.read_#{which}/3"

    with {:ok, o} <- Options.validate(opts, @read_spec, where),
         {:ok, kind} <- NxTensors.output_kind(o.output, where),
         {:ok, index, info} <- find(io, which, ref),
         {:ok, mode, dtype} <- read_mode(info, o, which, where),
         slot = if(which == :input, do: index, else: length(io.inputs) + index),
         {:ok, bin} <- Error.wrap(NIF.shared_read(io.ref, slot, mode)) do
      build(bin, info, dtype, kind, io.graph)
    end
  end

  @doc """
  Reads every output, in graph-output order. Options as `read_output/3`.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> one = for v <- [1.0, 1.0, 1.0, 1.0], into: <<>>, do: <<v::float-32-native>>
      iex> :ok = HexagonTpu.SharedIO.write_inputs(io, [one, one])
      iex> {:ok, ^io} = HexagonTpu.predict(model, io)
      iex> {:ok, [y]} = HexagonTpu.SharedIO.read_outputs(io, output: :binary)
      iex> for <<v::float-32-native <- y>>, do: v
      [2.0, 2.0, 2.0, 2.0]
  """
  @spec read_outputs(t(), keyword()) :: {:ok, [binary() | struct()]} | {:error, Error.t()}
  def read_outputs(%__MODULE__{outputs: outs} = io, opts \\ []) do
    Results.map_ok(0..(length(outs) - 1)//1, &read_output(io, &1, opts))
  end

  @doc """
  Frees the buffer now instead of at garbage collection (once no view binary and no call in
  progress uses it). Idempotent; later use is a `:closed` error.

  ## Examples

      iex> model = HexagonTpu.load_model!("add.bin", backend: :reference, graph: "add_f32")
      iex> io = HexagonTpu.Graph.alloc_io!(model)
      iex> HexagonTpu.SharedIO.close(io)
      :ok
      iex> {:error, error} = HexagonTpu.SharedIO.read_output(io, 0)
      iex> error.reason
      :closed
  """
  @spec close(t()) :: :ok
  def close(%__MODULE__{ref: ref}), do: NIF.shared_close(ref)

  # ---- internals -------------------------------------------------------------------------------

  @doc false
  def from_nif(ref, graph_name, inputs, outputs, meta) do
    %__MODULE__{
      ref: ref,
      graph: graph_name,
      inputs: inputs,
      outputs: outputs,
      fastrpc: meta.fastrpc,
      note: meta.note,
      size: meta.size
    }
  end

  defp find(io, kind, ref) do
    infos = if kind == :input, do: io.inputs, else: io.outputs

    found =
      cond do
        is_integer(ref) and ref >= 0 and ref < length(infos) ->
          {ref, Enum.at(infos, ref)}

        is_binary(ref) ->
          Enum.find_value(Enum.with_index(infos), fn {t, i} -> t.name == ref && {i, t} end)

        true ->
          nil
      end

    case found do
      {i, info} ->
        {:ok, i, info}

      nil ->
        names = Enum.map_join(infos, ", ", &inspect(&1.name))

        {:error,
         Error.new(
           :invalid_argument,
           "graph '#{io.graph}' has no #{kind} #{inspect(ref)} " <>
             "(#{length(infos)} #{kind}s: #{names})"
         )}
    end
  end

  defp read_mode(info, %{view: true, dequantize: :auto}, which, where)
       when info.dtype != :f32 do
    {:error,
     Error.new(
       :invalid_option,
       "#{where}: view: true reads #{which} '#{info.name}' in its own type (#{info.dtype}); " <>
         "pass dequantize: :none",
       tensor: info.name
     )}
  end

  defp read_mode(info, %{view: true}, _which, _where), do: {:ok, :view, info.dtype}
  defp read_mode(info, %{dequantize: :none}, _which, _where), do: {:ok, :copy, info.dtype}
  defp read_mode(_info, %{dequantize: :auto}, _which, _where), do: {:ok, :dequantize, :f32}

  defp build(bin, _info, _dtype, :binary, _graph), do: {:ok, bin}
  defp build(bin, info, dtype, :nx, graph), do: NxTensors.output(bin, info, dtype, graph)

  defp not_shared_io(other),
    do:
      {:error,
       Error.new(:invalid_argument, "expected a %HexagonTpu.SharedIO{}, got #{inspect(other)}")}

  defp ok!(:ok), do: :ok
  defp ok!({:error, %Error{} = error}), do: raise(error)
end
