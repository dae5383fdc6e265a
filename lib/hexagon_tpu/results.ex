defmodule HexagonTpu.Results do
  @moduledoc false
  # The one shape every "do this for each input/output, stop at the first error" takes in the
  # package: inputs prepared, outputs built, models loaded, entries executed.

  @doc """
  Calls `fun` on each element in order. `{:ok, values}` when every call returned `{:ok, value}`;
  otherwise the first other return, without calling `fun` on the rest.
  """
  @spec map_ok(Enumerable.t(), (term() -> {:ok, term()} | term())) :: {:ok, list()} | term()
  def map_ok(enumerable, fun) do
    enumerable
    |> Enum.reduce_while({:ok, []}, fn x, {:ok, acc} ->
      case fun.(x) do
        {:ok, value} -> {:cont, {:ok, [value | acc]}}
        other -> {:halt, other}
      end
    end)
    |> case do
      {:ok, acc} -> {:ok, Enum.reverse(acc)}
      other -> other
    end
  end
end
