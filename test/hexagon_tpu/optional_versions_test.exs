defmodule HexagonTpu.OptionalVersionsTest do
  # The run-time check that stands in for Hex's version requirements on the optional Nx and
  # :telemetry (HexagonTpu.Application refuses to start on a failure).
  use ExUnit.Case, async: true

  alias HexagonTpu.Optional

  test "supported or absent versions pass" do
    assert Optional.check_versions(nx: "0.7.2", telemetry: "1.3.0") == :ok
    assert Optional.check_versions(nx: "0.9.0", telemetry: "1.0.0") == :ok
    assert Optional.check_versions(nx: nil, telemetry: nil) == :ok
    # a development build of a supported release (Nx from its main branch)
    assert Optional.check_versions(nx: "0.10.0-dev", telemetry: "1.3.0") == :ok
    assert Optional.check_versions([]) == :ok
  end

  test "what is loaded now passes (hexagon_tpu started with it)" do
    assert Optional.check_versions() == :ok
  end

  test "an unsupported version is named with the one needed" do
    assert {:error, message} = Optional.check_versions(nx: "0.6.4", telemetry: "1.3.0")
    assert message =~ "nx 0.6.4 is loaded, but hexagon_tpu needs nx ~> 0.7"
    refute message =~ "telemetry 1.3.0"

    assert {:error, message} = Optional.check_versions(nx: "1.0.0", telemetry: "0.4.3")
    assert message =~ "nx 1.0.0 is loaded, but hexagon_tpu needs nx ~> 0.7"
    assert message =~ "telemetry 0.4.3 is loaded, but hexagon_tpu needs telemetry ~> 1.0"
  end

  test "a version that is not SemVer is refused, not guessed at" do
    assert {:error, message} = Optional.check_versions(telemetry: "1.3")
    assert message =~ "telemetry 1.3 is loaded, but hexagon_tpu needs telemetry ~> 1.0"
  end
end
