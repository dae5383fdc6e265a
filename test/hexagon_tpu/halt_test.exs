defmodule HexagonTpu.HaltTest do
  # The on-halt callback (c_src/hexagon_tpu_nif.c, OTP 26+): System.halt/1 skips the orderly
  # close (docs/elixir.md, Stopping), so the NIF stops its reaper from the VM's halt callback
  # before the QNN libraries' exit-time destructors run. A separate VM loads a model, keeps it
  # open and halts; with HTPU_HALT_REPORT set, the callback appends what it did to that file
  # (c_src/halt.c), which this test reads once that VM is gone.
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels

  # ERL_NIF_OPT_ON_HALT is NIF 2.17 (OTP 26); a VM before that has no halt callback to test.
  # The skip is printed so test/optional/summary.sh can tell it from a missing optional library.
  @otp String.to_integer(System.otp_release())
  if @otp < 26 do
    @skip "the NIF halt callback (ERL_NIF_OPT_ON_HALT) needs OTP 26+; this VM is OTP #{@otp}"
    # (on a line of its own: ExUnit's progress dots may be running)
    IO.puts("\nhtpu-vm-skip: HexagonTpu.HaltTest: #{@skip}")
    @moduletag skip: @skip
  end

  @script ~S"""
  path = System.fetch_env!("HTPU_HALT_MODEL")
  a = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-native>>
  {:ok, model} = HexagonTpu.load_model(path, backend: :reference)
  {:ok, [_]} = HexagonTpu.predict(model, [a, a], output: :binary)
  # garbage for the reaper, then a live model (runtime, context, graph) at the halt
  for _ <- 1..20, do: {:ok, _} = HexagonTpu.load_model(path, backend: :reference)
  :erlang.garbage_collect()
  IO.puts("halting with #{inspect(HexagonTpu.stats().live_graphs)} live graphs")
  System.halt(0)
  IO.puts(inspect(model))
  """

  test "System.halt/1 runs the NIF's halt callback with a model still open" do
    report = Path.join(tmp_dir!(), "halt-#{System.unique_integer([:positive])}.txt")
    elixir = System.find_executable("elixir") || flunk("elixir is not on PATH")
    ebin = Path.join(Mix.Project.app_path(), "ebin")
    env = [{"HTPU_HALT_REPORT", report}, {"HTPU_HALT_MODEL", build_file!(add_f32())}]

    {out, status} =
      System.cmd(elixir, ["-pa", ebin, "-e", @script], env: env, stderr_to_stdout: true)

    assert status == 0, out
    assert out =~ ~r/halting with [1-9]\d* live graphs/, out

    assert {:ok, text} = File.read(report),
           "the halt callback wrote no report to #{report}; the VM said:\n#{out}"

    assert [line] = String.split(text, "\n", trim: true), text

    fields =
      for [k, v] <- Regex.scan(~r/(\w+)=(\d+)/, line, capture: :all_but_first),
          into: %{},
          do: {k, String.to_integer(v)}

    # the reaper was running and left within the bound, before the process exit
    assert %{"reaper_running" => 1, "reaper_stopped" => 1} = fields, line
    # the callback ran with the model open: the halt skipped the orderly close
    assert fields["live_runtimes"] >= 1 and fields["live_contexts"] >= 1, line
    assert fields["live_graphs"] >= 1, line
  end
end
