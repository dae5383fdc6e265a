defmodule HexagonTpu.OptionalAppsTest do
  # Nx and :telemetry are hexagon_tpu's optional applications. Not async: some tests stop them
  # for a moment, under everyone's feet (and start them again).
  use ExUnit.Case, async: false
  # (the application controller logs each stop)
  @moduletag :capture_log

  import ExUnit.CaptureLog
  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, SharedIO}

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

  describe ":telemetry present but not running" do
    @describetag :telemetry
    @describetag skip: optional_skip(:telemetry)

    setup do
      on_exit(fn -> {:ok, _} = Application.ensure_all_started(:telemetry) end)
      :ok = Application.stop(:telemetry)
    end

    test "loads and executes emit nothing and log nothing" do
      refute HexagonTpu.Telemetry.enabled?()

      log =
        capture_log(fn ->
          model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
          bin = f32([1, 2, 3, 4])
          assert {:ok, [y]} = HexagonTpu.predict(model, [bin, bin], output: :binary)
          assert from_f32(y) == [2.0, 4.0, 6.0, 8.0]
          assert {:error, %Error{}} = HexagonTpu.predict(model, [bin])
          HexagonTpu.close(model)
        end)

      refute log =~ "telemetry"
    end
  end

  describe "Nx loadable but its application not loaded" do
    @describetag :nx
    @describetag skip: optional_skip(:nx)

    setup do
      on_exit(fn -> {:ok, _} = Application.ensure_all_started(:nx) end)
      :ok = Application.stop(:nx)
      :ok = Application.unload(:nx)
      model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
      on_exit(fn -> HexagonTpu.close(model) end)
      %{model: model}
    end

    test "predict returns an error that says what to do, never raises", %{model: model} do
      bin = f32([1, 2, 3, 4])

      assert {:error, %Error{reason: :nx_error, message: msg}} =
               HexagonTpu.predict(model, [bin, bin])

      assert msg =~ "the :nx application is not loaded"
      assert msg =~ "output: :binary"

      assert {:error, %Error{reason: :nx_error}} =
               HexagonTpu.predict(model, [bin, bin], output: :nx)

      assert {:ok, [y]} = HexagonTpu.predict(model, [bin, bin], output: :binary)
      assert from_f32(y) == [2.0, 4.0, 6.0, 8.0]
    end

    test "so does reading a SharedIO as Nx", %{model: model} do
      {:ok, io} = HexagonTpu.alloc_io(model)
      bin = f32([1, 2, 3, 4])
      :ok = SharedIO.write_inputs(io, [bin, bin])
      assert {:ok, ^io} = HexagonTpu.predict(model, io)
      assert {:error, %Error{reason: :nx_error}} = SharedIO.read_output(io, 0)
      assert {:ok, y} = SharedIO.read_output(io, 0, output: :binary)
      assert from_f32(y) == [2.0, 4.0, 6.0, 8.0]
      SharedIO.close(io)
    end
  end
end
