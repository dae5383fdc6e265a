defmodule HexagonTpu.TensorInfo do
  @moduledoc """
  One graph input or output, as the context binary describes it.

    * `:name`, `:id` - the tensor's name and the id QNN assigned
    * `:type` - element type in Nx notation: `{:f, 32}`, `{:f, 16}`, `{:u, 8}`, `{:s, 8}`,
      `{:u, 16}`, `{:s, 16}`, `{:u, 32}`, `{:s, 32}`, `{:u, 64}`, `{:s, 64}` (QNN's bool8 is
      `{:u, 8}`)
    * `:dtype` - the same as the C API's short name (`:f32`, `:u8`, `:i8`, `:bool8`, ...)
    * `:shape` - a tuple of dimensions, e.g. `{1, 224, 224, 3}`
    * `:num_elements`, `:byte_size` - in the tensor's own type
    * `:quantization` - `nil`, `%{scale: float, zero_point: integer}` (per tensor:
      `float = (q - zero_point) * scale`) or `%{axis: integer, scales: [float],
      zero_points: [integer]}` (per axis)
    * `:dynamic_dims` - the axes whose size is dynamic (the binary's `isDynamicDimensions`),
      `[]` when the shape is fixed. There `:shape` holds the maximum (and `:num_elements`,
      `:byte_size` are the maximum's); each execute sets an output's actual size, and
      `predict/3` answers in it: the output's binary holds just the elements produced, an Nx
      output has the shape the execute wrote, and with `stats: true` the stats'
      `:output_shapes` list every output's shape. An input is run at its maximum.

  ## Example

      {:ok, model} = HexagonTpu.load_model("/data/mobilenet_v2.bin")
      [input] = HexagonTpu.Graph.inputs(model)
      input.type          #=> {:u, 8}
      input.shape         #=> {1, 224, 224, 3}
      input.quantization  #=> %{scale: 0.0078125, zero_point: 128}
  """

  defstruct [
    :name,
    :id,
    :type,
    :dtype,
    :shape,
    :num_elements,
    :byte_size,
    :quantization,
    :qnn_data_type,
    dynamic_dims: []
  ]

  @type nx_type :: {:f | :u | :s, pos_integer()}
  @type dtype :: :f32 | :f16 | :u8 | :i8 | :u16 | :i16 | :u32 | :i32 | :u64 | :i64 | :bool8
  @type quantization ::
          nil
          | %{scale: float(), zero_point: integer()}
          | %{axis: non_neg_integer(), scales: [float()], zero_points: [integer()]}

  @type t :: %__MODULE__{
          name: String.t(),
          id: non_neg_integer(),
          type: nx_type(),
          dtype: dtype(),
          shape: tuple(),
          num_elements: non_neg_integer(),
          byte_size: non_neg_integer(),
          quantization: quantization(),
          qnn_data_type: non_neg_integer(),
          dynamic_dims: [non_neg_integer()]
        }

  @nx_types %{
    f32: {:f, 32},
    f16: {:f, 16},
    u8: {:u, 8},
    i8: {:s, 8},
    u16: {:u, 16},
    i16: {:s, 16},
    u32: {:u, 32},
    i32: {:s, 32},
    u64: {:u, 64},
    i64: {:s, 64},
    bool8: {:u, 8}
  }

  @doc """
  The Nx type of a C API dtype name.

      iex> HexagonTpu.TensorInfo.nx_type(:i8)
      {:s, 8}
  """
  @spec nx_type(dtype()) :: nx_type()
  def nx_type(dtype), do: Map.fetch!(@nx_types, dtype)

  @sizes %{f32: 4, f16: 2, u8: 1, i8: 1, bool8: 1, u16: 2, i16: 2, u32: 4, i32: 4, u64: 8, i64: 8}

  @doc false
  # Bytes per element of a dtype.
  @spec element_size(dtype()) :: pos_integer()
  def element_size(dtype), do: Map.fetch!(@sizes, dtype)

  @doc false
  @spec from_nif(map()) :: t()
  def from_nif(%{dtype: dtype} = map) do
    %__MODULE__{
      name: map.name,
      id: map.id,
      type: Map.get(@nx_types, dtype, {:u, 8}),
      dtype: dtype,
      shape: map.shape,
      num_elements: map.num_elements,
      byte_size: map.byte_size,
      quantization: map.quantization,
      qnn_data_type: map.qnn_data_type,
      dynamic_dims: Map.get(map, :dynamic_dims, [])
    }
  end
end
