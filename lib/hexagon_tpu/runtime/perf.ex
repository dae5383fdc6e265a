defmodule HexagonTpu.Runtime.Perf do
  # The performance profile names, in one place for every option that takes one: the runtime's
  # (Runtime.open/1, set_perf_profile/2) and a call's (Graph.CallOptions, Serving). Calls no
  # other module of the package, so any of them may read it at compile time.
  @moduledoc false

  alias HexagonTpu.Error

  # The C core's htpu_perf_profile names, highest performance first.
  @names [
    :burst,
    :sustained_high_performance,
    :high_performance,
    :balanced,
    :low_balanced,
    :high_power_saver,
    :power_saver,
    :low_power_saver,
    :extreme_power_saver,
    :default
  ]
  @expected "one of " <> Enum.map_join(@names, ", ", &inspect/1)

  @spec names() :: [atom()]
  def names, do: @names

  # What an option error says is expected: "one of :burst, ..., :default".
  @spec expected() :: String.t()
  def expected, do: @expected

  # {:ok, profile} or the :invalid_option error every API uses for a bad profile name.
  @spec validate(term(), String.t()) :: {:ok, atom()} | {:error, Error.t()}
  def validate(profile, where) do
    if profile in @names do
      {:ok, profile}
    else
      {:error,
       Error.new(
         :invalid_option,
         "#{where}: expected :perf_profile to be #{@expected}, got #{inspect(profile)}"
       )}
    end
  end
end
