defmodule HexagonTpu.Options do
  # Keyword option checking shared by the public modules: unknown keys, keys given twice and
  # bad values become {:error, %HexagonTpu.Error{reason: :invalid_option}} ("expected ...,
  # got ..."), so the non-raising API never raises on options; the ! variants raise that error.
  @moduledoc false

  alias HexagonTpu.Error

  @typedoc """
  name => {check, description of what is expected, default}. A check is data (so specs can
  live in module attributes): `{:one_of, values}`, `:boolean`, `:non_neg_integer`,
  `{:integer_in, min, max}` (the range the C side takes, e.g. a `uint32_t` field's),
  `:string_or_nil` (non-empty string without NUL bytes, or nil: C reads it up to the first
  NUL), `{:struct_or_nil, module}`, or a remote capture `&Mod.fun/1` returning a boolean, or
  `true | {:error, message}` when a plain "expected ..., got ..." would not say what is wrong
  (the message follows the function's name).
  """
  @type check ::
          {:one_of, [term()]}
          | :boolean
          | :non_neg_integer
          | {:integer_in, integer(), integer()}
          | :string_or_nil
          | {:struct_or_nil, module()}
          | (term() -> boolean() | {:error, String.t()})
  @type spec :: %{atom() => {check(), String.t(), term()}}

  @spec validate(term(), spec(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate(opts, spec, where) when is_list(opts) do
    if Keyword.keyword?(opts) do
      with :ok <- given_once(opts, where), do: check_each(opts, spec, where)
    else
      error("#{where}: expected options to be a keyword list, got #{inspect(opts)}")
    end
  end

  def validate(opts, _spec, where),
    do: error("#{where}: expected options to be a keyword list, got #{inspect(opts)}")

  @doc false
  # An option given twice is an :invalid_option error naming it, as the htpu command refuses
  # a repeated option: which of the two was meant would be a guess. For the few functions that
  # read their options without validate/3; anything not a keyword list is left to them.
  @spec given_once(term(), String.t()) :: :ok | {:error, Error.t()}
  def given_once(opts, where) do
    twice =
      Keyword.keyword?(opts) &&
        Enum.reduce_while(opts, MapSet.new(), fn {key, _}, seen ->
          if key in seen, do: {:halt, {:twice, key}}, else: {:cont, MapSet.put(seen, key)}
        end)

    case twice do
      {:twice, key} ->
        error("#{where}: option #{inspect(key)} given twice (each option may be given once)")

      _once ->
        :ok
    end
  end

  defp check_each(opts, spec, where) do
    Enum.reduce_while(opts, {:ok, defaults(spec)}, fn {key, value}, {:ok, acc} ->
      case Map.fetch(spec, key) do
        {:ok, {check, expected, _default}} ->
          case valid?(check, value) do
            true ->
              {:cont, {:ok, Map.put(acc, key, value)}}

            {:error, message} ->
              {:halt, error("#{where}: #{message}")}

            false ->
              {:halt,
               error(
                 "#{where}: expected #{inspect(key)} to be #{expected}, got #{inspect(value)}"
               )}
          end

        :error ->
          known = spec |> Map.keys() |> Enum.sort() |> Enum.map_join(", ", &inspect/1)

          {:halt, error("#{where}: unknown option #{inspect(key)} (known options: #{known})")}
      end
    end)
  end

  @doc false
  @spec split(keyword(), [atom()]) :: {keyword(), keyword()}
  def split(opts, keys) when is_list(opts), do: Keyword.split(opts, keys)
  def split(opts, _keys), do: {[], opts}

  defp valid?({:one_of, values}, v), do: v in values
  defp valid?(:boolean, v), do: is_boolean(v)
  defp valid?(:non_neg_integer, v), do: is_integer(v) and v >= 0
  defp valid?({:integer_in, min, max}, v), do: is_integer(v) and v >= min and v <= max

  defp valid?(:string_or_nil, v),
    do: is_nil(v) or (is_binary(v) and v != "" and not String.contains?(v, <<0>>))

  defp valid?({:struct_or_nil, mod}, v), do: is_nil(v) or is_struct(v, mod)
  defp valid?(fun, v) when is_function(fun, 1), do: fun.(v)

  defp defaults(spec), do: Map.new(spec, fn {key, {_, _, default}} -> {key, default} end)

  defp error(message), do: {:error, Error.new(:invalid_option, message)}
end
