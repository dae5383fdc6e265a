defmodule HexagonTpu.Runtime.Env do
  # The `env:` option (Runtime.open/1's and Graph.alloc_io/2's): OS environment variables the
  # NIF sets around one call, checked for what setenv(3) can take, in full. A name is non-empty
  # without "=" or NUL (setenv refuses "=", and C would cut at the NUL), a value is nil (unset)
  # or a string without NUL; at most max/0 entries.
  @moduledoc false

  # The NIF sets at most this many (c_src/env.h, MAX_ENV).
  @max_env 16

  @spec max() :: pos_integer()
  def max, do: @max_env

  # The option's check (HexagonTpu.Options): true or {:error, message}.
  @spec check(term()) :: true | {:error, String.t()}
  def check(list) when is_list(list) do
    cond do
      not proper_list?(list) ->
        {:error,
         "expected :env to be a proper list of {name, value | nil} tuples, got an " <>
           "improper list"}

      length(list) > @max_env ->
        {:error, "expected :env to have at most #{@max_env} entries, got #{length(list)}"}

      true ->
        Enum.find_value(list, true, &entry_error/1)
    end
  end

  def check(other),
    do:
      {:error,
       "expected :env to be a list of at most #{@max_env} {name, value | nil} tuples, got " <>
         inspect(other, limit: 5)}

  defp proper_list?([]), do: true
  defp proper_list?([_ | tail]), do: proper_list?(tail)
  defp proper_list?(_), do: false

  defp entry_error({name, value}) when is_binary(name) do
    cond do
      name == "" or String.contains?(name, ["=", <<0>>]) ->
        {:error,
         "expected each :env name to be a non-empty string without \"=\" or NUL bytes, got " <>
           inspect(name, limit: 5)}

      not (is_nil(value) or (is_binary(value) and not String.contains?(value, <<0>>))) ->
        {:error,
         "expected the :env value of #{inspect(name)} to be nil or a string without NUL " <>
           "bytes, got #{inspect(value, limit: 5)}"}

      true ->
        nil
    end
  end

  defp entry_error(other),
    do:
      {:error,
       "expected each :env entry to be a {name, value | nil} tuple of strings, got " <>
         inspect(other, limit: 5)}
end
