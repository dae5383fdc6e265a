defmodule HexagonTpu.Optional do
  # Is an optional dependency (Nx, :telemetry) usable? Asked on every execute, so it must be
  # cheap: Code.ensure_loaded?/1 of a module that does not exist searches the whole code path
  # (measured ~300 us per call), so a miss is remembered. A module loaded later by any means is
  # still picked up, since :erlang.module_loaded/1 is checked first.
  @moduledoc false

  @spec available?(module()) :: boolean()
  def available?(module) do
    :erlang.module_loaded(module) or
      (:persistent_term.get({__MODULE__, module}, :unknown) == :unknown and load(module))
  end

  # The versions a Hex user would be held to if Nx and :telemetry were `optional: true` deps of
  # the package. They are not (that makes `mix compile` fetch them from Hex, even offline:
  # mix.exs, application/0), so the application checks them when it starts instead.
  @requirements [nx: "~> 0.7", telemetry: "~> 1.0"]

  @doc """
  `:ok` when every optional application that is loaded has a version hexagon_tpu supports
  (absent ones are fine), else an error naming the version found and the one needed. `found`
  maps each application to its version, `nil` when not loaded (default: what is loaded now).
  """
  @spec check_versions([{atom(), String.t() | nil}]) :: :ok | {:error, String.t()}
  def check_versions(found \\ loaded_versions()) do
    problems =
      for {app, requirement} <- @requirements,
          vsn <- [found[app]],
          vsn != nil,
          not matches?(vsn, requirement),
          do: "#{app} #{vsn} is loaded, but hexagon_tpu needs #{app} #{requirement}"

    case problems do
      [] ->
        :ok

      _ ->
        {:error,
         Enum.join(problems, "; ") <>
           " (set that version in your project's deps, docs/elixir.md, Nx and :telemetry)"}
    end
  end

  defp loaded_versions do
    for {app, _} <- @requirements do
      {app, with(vsn when vsn != nil <- Application.spec(app, :vsn), do: to_string(vsn))}
    end
  end

  defp matches?(vsn, requirement) do
    case Version.parse(vsn) do
      {:ok, version} -> Version.match?(version, requirement, allow_pre: true)
      :error -> false
    end
  end

  defp load(module) do
    loaded = Code.ensure_loaded?(module)
    if !loaded, do: :persistent_term.put({__MODULE__, module}, :missing)
    loaded
  end
end
