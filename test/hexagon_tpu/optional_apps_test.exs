defmodule HexagonTpu.OptionalAppsTest do
  # Nx and :telemetry are hexagon_tpu's optional applications.
  use ExUnit.Case, async: true

  test "the .app lists Nx and :telemetry as optional applications, started before hexagon_tpu" do
    apps = Application.spec(:hexagon_tpu, :applications)
    assert :nx in apps and :telemetry in apps
    assert Enum.sort(Application.spec(:hexagon_tpu, :optional_applications)) == [:nx, :telemetry]
  end

  test "present optional applications are started with hexagon_tpu" do
    started = Enum.map(Application.started_applications(), &elem(&1, 0))

    for app <- [:nx, :telemetry], :code.lib_dir(app) != {:error, :bad_name} do
      assert app in started, "#{app} is in the code path but was not started"
    end
  end
end
