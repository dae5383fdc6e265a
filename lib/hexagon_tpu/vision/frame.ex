defmodule HexagonTpu.Vision.Frame do
  @moduledoc """
  A camera frame: its bytes, size, pixel format and row stride, and optionally the part of it
  to use. `HexagonTpu.Vision` reads it in place (the binary is never copied).

    * `:data` - the bytes (a binary); rows are `:stride` bytes apart and the last one need not
      be padded
    * `:width`, `:height` - in pixels
    * `:format` - `:rgb24`, `:bgr24`, `:rgba`, `:bgra` (alpha ignored), `:gray8`, `:yuyv`
      (4:2:2 packed, V4L2 `YUYV`; even width) or `:nv12` (4:2:0, the Y plane then the U,V
      pairs, what the VPU decodes to; even width and height; BT.601 limited range as OpenCV's
      `COLOR_YUV2RGB_NV12`)
    * `:stride` - bytes from one row to the next (V4L2's `bytesperline`: VPU buffers are
      padded); `0` (default): rows packed
    * `:uv_offset` - `:nv12` only: where the UV plane starts in `:data`, in bytes (a VPU buffer
      of aligned height puts it after some padding rows); `0` (default): right after the Y
      plane (`stride * height`)
    * `:crop` - `{x, y, width, height}` in pixels, the part of the frame to use (boxes still
      come back in the whole frame's pixels), or `nil` (default): all of it

  A frame whose rows would end past its data, a stride smaller than a row, odd sizes for YUV
  and a crop outside the frame are `:invalid_argument` errors naming what was wrong.

  ## Examples

      iex> {:ok, frame} = HexagonTpu.Vision.Frame.new(<<0::size(4 * 2 * 24)>>, 4, 2, :rgb24)
      iex> {frame.width, frame.height, frame.format, frame.stride}
      {4, 2, :rgb24, 0}
      iex> {:error, error} = HexagonTpu.Vision.Frame.new(<<>>, 4, 2, :i420)
      iex> error.message
      "HexagonTpu.Vision.Frame.new/5: expected :format to be one of :rgb24, :bgr24, :rgba, :bgra, :gray8, :yuyv, :nv12, got :i420"
  """

  alias HexagonTpu.Error

  @formats [:rgb24, :bgr24, :rgba, :bgra, :gray8, :yuyv, :nv12]
  @max_u32 4_294_967_295

  @enforce_keys [:data, :width, :height, :format]
  defstruct [:data, :width, :height, :format, stride: 0, uv_offset: 0, crop: nil]

  @type format :: :rgb24 | :bgr24 | :rgba | :bgra | :gray8 | :yuyv | :nv12
  @type t :: %__MODULE__{
          data: binary(),
          width: pos_integer(),
          height: pos_integer(),
          format: format(),
          stride: non_neg_integer(),
          uv_offset: non_neg_integer(),
          crop: {non_neg_integer(), non_neg_integer(), pos_integer(), pos_integer()} | nil
        }

  @doc """
  The pixel formats a frame may have.

  ## Examples

      iex> HexagonTpu.Vision.Frame.formats()
      [:rgb24, :bgr24, :rgba, :bgra, :gray8, :yuyv, :nv12]
  """
  @spec formats() :: [format()]
  def formats, do: @formats

  @doc """
  A frame of `data`. Options: `:stride`, `:uv_offset`, `:crop` (see the module doc). The
  types are checked here, the sizes against the data when the frame is used.

  ## Examples

  A 1920x1080 NV12 frame from a VPU buffer of aligned height (1088 rows), rows of 2048 bytes:

      iex> data = :binary.copy(<<0>>, div(2048 * 1088 * 3, 2))
      iex> {:ok, f} = HexagonTpu.Vision.Frame.new(data, 1920, 1080, :nv12, stride: 2048, uv_offset: 2048 * 1088)
      iex> {f.format, f.stride, f.uv_offset}
      {:nv12, 2048, 2228224}
      iex> {:error, error} = HexagonTpu.Vision.Frame.new(data, 1920, 1080, :nv12, crop: {0, 0, 0, 10})
      iex> error.message
      "HexagonTpu.Vision.Frame.new/5: expected :crop to be nil or {x, y, width, height}, got {0, 0, 0, 10}"
  """
  @spec new(binary(), pos_integer(), pos_integer(), format(), keyword()) ::
          {:ok, t()} | {:error, Error.t()}
  def new(data, width, height, format, opts \\ []) do
    frame = %__MODULE__{
      data: data,
      width: width,
      height: height,
      format: format,
      stride: Keyword.get(opts, :stride, 0),
      uv_offset: Keyword.get(opts, :uv_offset, 0),
      crop: Keyword.get(opts, :crop)
    }

    with :ok <- known_options(opts),
         :ok <- check(frame, "HexagonTpu.Vision.Frame.new/5"),
         do: {:ok, frame}
  end

  defp known_options(opts) when is_list(opts) do
    case Enum.uniq(Keyword.keys(opts)) -- [:stride, :uv_offset, :crop] do
      [] ->
        # an :invalid_argument error, as the frame's others
        with {:error, e} <- HexagonTpu.Options.given_once(opts, "HexagonTpu.Vision.Frame.new/5"),
             do: error(e.message)

      [k | _] ->
        error(
          "HexagonTpu.Vision.Frame.new/5: unknown option #{inspect(k)} (known options: " <>
            ":crop, :stride, :uv_offset)"
        )
    end
  end

  defp known_options(opts),
    do:
      error(
        "HexagonTpu.Vision.Frame.new/5: expected options to be a keyword list, got #{inspect(opts)}"
      )

  @doc false
  # The field types, before the C core checks the sizes against the data. `where` names the
  # public function in messages.
  @spec check(term(), String.t()) :: :ok | {:error, Error.t()}
  def check(%__MODULE__{} = f, where) do
    cond do
      not is_binary(f.data) ->
        expected(where, :data, "a binary", f.data)

      not pos_u32?(f.width) ->
        expected(where, :width, "a positive integer", f.width)

      not pos_u32?(f.height) ->
        expected(where, :height, "a positive integer", f.height)

      f.format not in @formats ->
        expected(where, :format, formats_text(), f.format)

      not u32?(f.stride) ->
        expected(where, :stride, "a non-negative integer (bytes)", f.stride)

      not u32?(f.uv_offset) ->
        expected(where, :uv_offset, "a non-negative integer (bytes)", f.uv_offset)

      not crop?(f.crop) ->
        expected(where, :crop, "nil or {x, y, width, height}", f.crop)

      true ->
        :ok
    end
  end

  def check(other, where),
    do: error("#{where}: expected a %HexagonTpu.Vision.Frame{}, got #{inspect(other, limit: 5)}")

  @doc """
  A frame from a binary PPM (`P6`, 8-bit: `:rgb24`) or PGM (`P5`: `:gray8`) image, the formats
  `htpu run --image` reads. The pixels are a sub-binary of `ppm` (not copied).

  ## Examples

      iex> {:ok, f} = HexagonTpu.Vision.Frame.from_ppm("P6\\n# a comment\\n2 1\\n255\\n" <> <<1, 2, 3, 4, 5, 6>>)
      iex> {f.width, f.height, f.format, f.data}
      {2, 1, :rgb24, <<1, 2, 3, 4, 5, 6>>}
      iex> {:error, error} = HexagonTpu.Vision.Frame.from_ppm("P6\\n2 1\\n255\\n" <> <<1, 2>>)
      iex> error.message
      "HexagonTpu.Vision.Frame.from_ppm/1: a 2x1 P6 image has 6 bytes of pixels, got 2"
  """
  @spec from_ppm(binary()) :: {:ok, t()} | {:error, Error.t()}
  def from_ppm(ppm) when is_binary(ppm) do
    where = "HexagonTpu.Vision.Frame.from_ppm/1"

    with {:ok, magic, rest} <- ppm_magic(ppm, where),
         {:ok, [w, h, maxval], pixels} <- ppm_numbers(rest, 3, [], where),
         :ok <- ppm_sizes(magic, w, h, maxval, byte_size(pixels), where) do
      bpp = if magic == "P6", do: 3, else: 1
      format = if magic == "P6", do: :rgb24, else: :gray8

      {:ok,
       %__MODULE__{data: binary_part(pixels, 0, w * h * bpp), width: w, height: h, format: format}}
    end
  end

  def from_ppm(other),
    do:
      error(
        "HexagonTpu.Vision.Frame.from_ppm/1: expected a binary, got #{inspect(other, limit: 5)}"
      )

  @doc """
  Reads a PPM or PGM file: `from_ppm/1` of its contents.

  ## Examples

      iex> File.write!("one.pgm", "P5 1 1 255\\n" <> <<200>>)
      iex> {:ok, frame} = HexagonTpu.Vision.Frame.read_ppm("one.pgm")
      iex> {frame.format, frame.data}
      {:gray8, <<200>>}
      iex> {:error, error} = HexagonTpu.Vision.Frame.read_ppm("missing.ppm")
      iex> error.message
      "cannot read 'missing.ppm': no such file or directory"
  """
  @spec read_ppm(Path.t()) :: {:ok, t()} | {:error, Error.t()}
  def read_ppm(path) do
    case File.read(path) do
      {:ok, bytes} ->
        from_ppm(bytes)

      {:error, reason} ->
        {:error, Error.new(:io, "cannot read '#{path}': #{:file.format_error(reason)}")}
    end
  end

  defp ppm_magic(<<m::binary-size(2), rest::binary>>, _where) when m in ["P6", "P5"],
    do: {:ok, m, rest}

  defp ppm_magic(_, where),
    do:
      error("#{where}: not a binary PPM (P6) or PGM (P5) image: it does not start with P6 or P5")

  # Three decimal numbers separated by whitespace and comments, then one whitespace byte.
  defp ppm_numbers(rest, 0, acc, _where), do: {:ok, Enum.reverse(acc), rest}

  defp ppm_numbers(bin, n, acc, where) do
    bin = skip_space(bin)

    case Integer.parse(bin) do
      {v, <<c, rest::binary>>} when v > 0 and c in ~c" \t\r\n" ->
        ppm_numbers(if(n == 1, do: rest, else: <<c, rest::binary>>), n - 1, [v | acc], where)

      _ ->
        error("#{where}: the header's width, height and maximum value must be positive numbers")
    end
  end

  defp skip_space(<<c, rest::binary>>) when c in ~c" \t\r\n", do: skip_space(rest)

  defp skip_space(<<?#, rest::binary>>) do
    case :binary.split(rest, "\n") do
      [_, after_line] -> skip_space(after_line)
      [_] -> ""
    end
  end

  defp skip_space(bin), do: bin

  defp ppm_sizes(magic, w, h, maxval, have, where) do
    bpp = if magic == "P6", do: 3, else: 1

    cond do
      maxval != 255 ->
        error("#{where}: only 8-bit images (maximum value 255) are read, got #{maxval}")

      w > 65_535 or h > 65_535 ->
        error("#{where}: #{w}x#{h} is larger than 65535 on a side")

      have < w * h * bpp ->
        error(
          "#{where}: a #{w}x#{h} #{magic} image has #{w * h * bpp} bytes of pixels, got #{have}"
        )

      true ->
        :ok
    end
  end

  defp pos_u32?(v), do: is_integer(v) and v > 0 and v <= @max_u32
  defp u32?(v), do: is_integer(v) and v >= 0 and v <= @max_u32

  defp crop?(nil), do: true
  defp crop?({x, y, w, h}), do: u32?(x) and u32?(y) and pos_u32?(w) and pos_u32?(h)
  defp crop?(_), do: false

  defp formats_text, do: "one of " <> Enum.map_join(@formats, ", ", &inspect/1)

  defp expected(where, key, what, got),
    do: error("#{where}: expected #{inspect(key)} to be #{what}, got #{inspect(got, limit: 5)}")

  defp error(message), do: {:error, Error.new(:invalid_argument, message)}
end
