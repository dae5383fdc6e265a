defmodule HexagonTpu.QnnSetTest do
  # The :qnn runtime option (docs/board.md, "QNN sets") against the fake QAIRT releases of
  # mk/qnnsets.mk (built here when missing): the 2.48 set runs a binary made by 2.48, the 2.42
  # set refuses it naming the 2.48 set, and a second set in the same VM is refused before any
  # QNN call. The set a process uses is decided once for its life (so is this VM's, after
  # these tests): only these tests name sets, and the reference backend is no DSP set.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Runtime}

  @root Path.expand("../..", __DIR__)

  # HTPU_TEST_QNN_SETS: where they were built (a copy of the project without its C sources,
  # test/precompiled/run.sh); else this checkout's build/plain, made here when missing.
  setup_all do
    sets = System.get_env("HTPU_TEST_QNN_SETS") || Path.join(@root, "build/plain/qnnsets")

    unless File.exists?(Path.join(sets, "2.48/libQnnHtp.so")) do
      File.exists?(Path.join(@root, "Makefile")) ||
        flunk("no fake QNN sets in #{sets} and no Makefile to build them (make qnnsets)")

      {out, status} =
        System.cmd("make", ["-s", "--no-print-directory", "qnnsets", "BUILD=build/plain"],
          cd: @root,
          stderr_to_stdout: true,
          env: [{"MAKEFLAGS", nil}, {"MFLAGS", nil}]
        )

      if status != 0, do: raise("make qnnsets failed: #{out}")
    end

    bin =
      build!("""
      meta build_id="v2.48.40.260301120000_197354" backend_api=5.48.0 core_api=2.34.0
      #{add_f32()}
      """)

    %{bin: bin, sets: sets}
  end

  test "a set runs what its release made; a second set in the VM is refused",
       %{bin: bin, sets: sets} do
    new = Runtime.open!(qnn: Path.join(sets, "2.48"))
    assert Runtime.info(new).build_id == "v2.48.40.260301120000_197354"
    model = HexagonTpu.load_model!({:binary, bin}, runtime: new)
    assert {:ok, [y]} = add(model)
    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    HexagonTpu.close(model)

    # another set in this VM: refused before any QNN call, naming both
    assert {:error, %Error{reason: :invalid_argument, message: msg}} =
             Runtime.open(qnn: Path.join(sets, "2.42"))

    assert msg =~ "already uses the QNN set in '#{Path.expand(sets)}/2.48'"
    assert msg =~ "needs another OS process"
    Runtime.close(new)

    # the same set again is fine
    again = Runtime.open!(qnn: Path.join(sets, "2.48"))
    Runtime.close(again)
  end

  test "a folder that is no set, and an option that is no path, are refused" do
    assert {:error, %Error{reason: :invalid_argument, message: msg}} = Runtime.open(qnn: @root)

    assert msg =~ "is not a QNN set: no libQnnHtp.so in it"

    assert {:error, %Error{reason: :invalid_option}} = Runtime.open(qnn: 42)
  end
end
