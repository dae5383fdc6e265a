defmodule HexagonTpu.FaultsTest do
  # Not async: the fault rules travel through the OS environment during Runtime.open/1
  # (the `env:` test hook), which other tests' opens must not see.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Runtime}

  setup_all do
    %{bin: build!(add_f32())}
  end

  defp runtime(faults), do: Runtime.open!(backend: :reference, env: [{"HTPU_REF_FAULTS", faults}])

  test "a DSP restart (1007) in graphExecute comes back with the QNN code and name; later calls work",
       %{bin: bin} do
    # Three failing calls: enough to defeat a core that retries once after a restart.
    rt = runtime("graphExecute:1:1007:3")
    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt)

    assert {:error, %Error{} = e} = add(model)
    assert e.reason in [:qnn_error, :device_reset]
    assert e.qnn_code == 1007
    assert e.qnn_name == "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION"
    assert e.message =~ "1007"
    assert Exception.message(e) =~ "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION"

    results = for _ <- 1..4, do: add(model)
    assert {:ok, [y]} = List.last(results)
    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]

    assert_raise Error, fn ->
      HexagonTpu.predict!(
        HexagonTpu.load_model!({:binary, bin}, runtime: runtime("graphExecute:1:1007:3")),
        [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])]
      )
    end
  end

  test "a single DSP restart is recovered by the core: the call succeeds", %{bin: bin} do
    before = HexagonTpu.stats().recoveries
    model = HexagonTpu.load_model!({:binary, bin}, runtime: runtime("graphExecute:1:1007"))
    assert {:ok, [y]} = add(model)
    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    assert HexagonTpu.stats().recoveries == before + 1
  end

  test "the rules stay with their runtime: the environment is restored after open", %{bin: bin} do
    _faulty = runtime("graphExecute:*:1002")
    assert System.get_env("HTPU_REF_FAULTS") == nil
    clean = HexagonTpu.load_model!({:binary, bin}, runtime: Runtime.open!(backend: :reference))
    assert {:ok, _} = add(clean)
  end

  test "one open's env: never reaches a runtime opened at the same time", %{bin: bin} do
    # Two opens on two dirty IO threads at once: the one with fault rules sets them in the OS
    # environment around its backendCreate; the other's backendCreate must not read them
    # (an async test's runtime got another test's "graphExecute:6:1002" this way in CI).
    for _ <- 1..30 do
      faulty = Task.async(fn -> runtime("graphExecute:*:1002") end)
      clean = Task.async(fn -> Runtime.open!(backend: :reference) end)
      _ = Task.await(faulty)
      model = HexagonTpu.load_model!({:binary, bin}, runtime: Task.await(clean))
      assert {:ok, _} = add(model)
      HexagonTpu.close(model)
    end
  end

  test "a failing context load names the QNN error", %{bin: bin} do
    rt = runtime("contextCreateFromBinary:*:1002")

    assert {:error, %Error{reason: :qnn_error, qnn_code: 1002, qnn_name: name}} =
             HexagonTpu.load_model({:binary, bin}, runtime: rt)

    assert is_binary(name)
  end

  test "a failing backend creation is an error, not a crash" do
    assert {:error, %Error{qnn_code: 1002} = e} =
             Runtime.open(backend: :reference, env: [{"HTPU_REF_FAULTS", "backendCreate:*:1002"}])

    assert e.reason == :qnn_error
    assert {:ok, _} = Runtime.open(backend: :reference)
  end

  test "a restart that did not recover (1011) fails every call of that runtime only", %{bin: bin} do
    model = HexagonTpu.load_model!({:binary, bin}, runtime: runtime("graphExecute:1:1011"))
    assert {:error, %Error{} = e} = add(model)
    assert e.qnn_code == 1011 or e.reason == :device_reset
    assert {:error, %Error{}} = add(model)

    fresh = HexagonTpu.load_model!({:binary, bin}, runtime: Runtime.open!(backend: :reference))
    assert {:ok, _} = add(fresh)
  end
end
