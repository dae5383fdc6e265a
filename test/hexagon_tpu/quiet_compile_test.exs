defmodule HexagonTpu.QuietCompileTest do
  # A Nerves target build compiles hexagon_tpu and the app on the host while priv/ holds a NIF
  # the host cannot load. Compiling must not load the NIF (nor log that it could not); using
  # the package without a loadable NIF must say which file and why. Each case runs in a fresh
  # VM (`elixir`), where hexagon_tpu's code path has a priv/ of its own: without the .so, then
  # with a broken one.
  use ExUnit.Case, async: true

  import HexagonTpu.TestModels, only: [tmp_dir!: 0]

  @lib Path.expand("../../lib", __DIR__)

  # A module of the kind an application writes: calls into hexagon_tpu at run time, and one
  # at compile time (which loads HexagonTpu.Runtime into the compiler).
  @user_module """
  defmodule QuietUser do
    @profiles HexagonTpu.Runtime.perf_profiles()
    def profiles, do: @profiles
    def run(path), do: HexagonTpu.load_model(path, backend: :reference)
  end
  """

  # Run in the child: compile lib/ and the user module (mode "compile") into OUT, or only use
  # what an earlier run compiled ("use"); then start the application and call a function that
  # needs the NIF. The compile's output is everything before the "compiled" line.
  @child ~S"""
  [mode, lib, out, app_file] = System.argv()
  ebin = Path.join(out, "hexagon_tpu/ebin")
  File.mkdir_p!(ebin)
  true = Code.prepend_path(ebin)

  if mode == "compile" do
    File.cp!(app_file, Path.join(ebin, "hexagon_tpu.app"))
    files = Path.wildcard(Path.join(lib, "**/*.ex"))
    {:ok, _, _} = Kernel.ParallelCompiler.compile_to_path(files, ebin)
    user_ebin = Path.join(out, "user")
    File.mkdir_p!(user_ebin)
    user = Path.join(out, "quiet_user.ex")
    {:ok, [QuietUser], _} = Kernel.ParallelCompiler.compile_to_path([user], user_ebin)
    IO.puts("compiled; NIF module loaded: #{:erlang.module_loaded(HexagonTpu.NIF)}")
  end

  case Application.ensure_all_started(:hexagon_tpu) do
    {:error, {:hexagon_tpu, reason}} -> IO.puts("start: #{inspect(reason)}")
    other -> IO.puts("start: unexpected #{inspect(other)}")
  end

  try do
    HexagonTpu.stats()
    IO.puts("stats: no error")
  rescue
    e in HexagonTpu.Error -> IO.puts("stats: #{e.reason}: #{e.message}")
  end
  """

  test "compiling without a loadable NIF logs nothing; using it names the file and the reason" do
    out = Path.join(tmp_dir!(), "quiet_compile_#{System.unique_integer([:positive])}")
    priv = Path.join(out, "hexagon_tpu/priv")
    File.mkdir_p!(priv)
    File.write!(Path.join(out, "quiet_user.ex"), @user_module)
    so = Path.join(priv, "hexagon_tpu_nif.so")

    # No .so at all.
    output = child("compile", out)
    [compile_output, rest] = String.split(output, "compiled; NIF module loaded: ", parts: 2)
    assert compile_output == ""
    assert rest =~ ~r/^false\n/
    assert rest =~ "start: {\"the hexagon_tpu NIF #{Path.rootname(so)}.so could not be loaded"
    assert rest =~ "stats: nif_not_loaded: the hexagon_tpu NIF #{Path.rootname(so)}.so"
    assert rest =~ "cannot open shared object file"
    assert rest =~ "built into priv/ by `mix compile`"
    refute rest =~ "on_load"

    # A shared object for another machine, as a target build's is on the host: glibc says "No
    # such file or directory", so the message says what the file is.
    {machine, name} = other_machine()
    File.write!(so, elf_header(machine))
    output = child("use", out)
    assert output =~ "start: {\"the hexagon_tpu NIF #{Path.rootname(so)}.so could not be loaded"
    assert output =~ "stats: nif_not_loaded: the hexagon_tpu NIF #{Path.rootname(so)}.so"
    assert output =~ "(the file is an ELF object for #{name}; this VM runs on "
    refute output =~ "on_load"

    # A file that is no shared object at all.
    File.write!(so, "not an ELF file")
    output = child("use", out)
    assert output =~ "stats: nif_not_loaded: the hexagon_tpu NIF #{Path.rootname(so)}.so"
    assert output =~ "file too short"
    refute output =~ "the file is an ELF"
  end

  # An architecture that is not this VM's: AArch64 on x86-64 (CI), x86-64 on the board.
  defp other_machine do
    if :erlang.system_info(:system_architecture) |> to_string() |> String.starts_with?("x86_64"),
      do: {183, "AArch64"},
      else: {62, "x86-64"}
  end

  # The 64-byte header of a 64-bit little-endian ELF shared object for `machine`, and padding.
  defp elf_header(machine) do
    <<0x7F, "ELF", 2, 1, 1, 0, 0::64, 3::little-16, machine::little-16, 1::little-32,
      0::little-64, 64::little-64, 0::little-64, 0::little-32, 64::little-16, 56::little-16,
      1::little-16, 64::little-16, 0::little-16, 0::little-16, 0::size(4096)-unit(8)>>
  end

  defp child(mode, out) do
    app_file = Path.join(Application.app_dir(:hexagon_tpu, "ebin"), "hexagon_tpu.app")
    args = ["-e", @child, "--", mode, @lib, out, app_file]
    # Nothing of the test VM's code path (its own hexagon_tpu, Nx) reaches the child.
    env = [{"ERL_LIBS", nil}, {"MIX_ENV", nil}, {"ERL_AFLAGS", nil}, {"ELIXIR_ERL_OPTIONS", nil}]
    {output, status} = System.cmd("elixir", args, env: env, stderr_to_stdout: true)
    assert status == 0, output
    output
  end
end
