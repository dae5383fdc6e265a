defmodule Mix.Tasks.Compile.HexagonTpuNif do
  @shortdoc "Builds the hexagon_tpu NIF and reference backend into priv/ with make"
  @moduledoc """
  Runs `make nif` (mk/nif.mk) so `mix compile` builds `priv/hexagon_tpu_nif.so` and copies the
  reference backend (`libhtpu_refbackend.so`, `libhtpu_refsystem.so`, `htpu-refbuild`) next to
  it. No Hex build tool: the project's own Makefile does the work.

  Environment honoured (Nerves sets these for the target): `CC`, `CROSSCOMPILE`, `CFLAGS`,
  `LDFLAGS`, `ERTS_INCLUDE_DIR`, `MAKE`.
  """
  use Mix.Task.Compiler

  @impl Mix.Task.Compiler
  def run(_args) do
    app_path = Mix.Project.app_path()

    env = [
      {"MIX_APP_PATH", app_path},
      {"ERTS_INCLUDE_DIR", System.get_env("ERTS_INCLUDE_DIR") || erts_include_dir()},
      # When `mix test` is started from inside `make test`, the parent's MAKEFLAGS would carry
      # its variables (BUILD, SAN=-fsanitize=...) into this build: a sanitizer-built NIF does
      # not load into the VM. This build sets everything it needs itself.
      {"MAKEFLAGS", nil},
      {"MFLAGS", nil},
      {"MAKELEVEL", nil}
    ]

    args = [
      "--no-print-directory",
      "-j#{System.schedulers_online()}",
      # Objects per Mix build path: host and Nerves-target builds never share them.
      "BUILD=#{Path.join(app_path, "native")}",
      "nif"
    ]

    make = System.get_env("MAKE", "make")

    case System.cmd(make, args,
           cd: File.cwd!(),
           env: env,
           stderr_to_stdout: true,
           into: IO.stream(:stdio, :line)
         ) do
      {_, 0} ->
        {:ok, []}

      {_, status} ->
        message = "`#{make} #{Enum.join(args, " ")}` failed with exit status #{status}"
        Mix.shell().error(message)

        diagnostic = %Mix.Task.Compiler.Diagnostic{
          compiler_name: "hexagon_tpu_nif",
          file: Path.join(File.cwd!(), "mk/nif.mk"),
          message: message,
          position: nil,
          severity: :error
        }

        {:error, [diagnostic]}
    end
  end

  @impl Mix.Task.Compiler
  def clean do
    app_path = Mix.Project.app_path()
    File.rm_rf!(Path.join(app_path, "native"))

    for file <- ~w(hexagon_tpu_nif.so libhtpu_refbackend.so libhtpu_refsystem.so htpu-refbuild) do
      File.rm(Path.join([app_path, "priv", file]))
    end

    :ok
  end

  defp erts_include_dir do
    Path.join([
      to_string(:code.root_dir()),
      "erts-#{:erlang.system_info(:version)}",
      "include"
    ])
  end
end

defmodule HexagonTpu.MixProject do
  use Mix.Project

  @version "0.1.0"

  def project do
    [
      app: :hexagon_tpu,
      version: @version,
      elixir: "~> 1.14",
      compilers: [:hexagon_tpu_nif | Mix.compilers()],
      elixirc_paths: elixirc_paths(Mix.env()),
      start_permanent: Mix.env() == :prod,
      # Nx and :telemetry are optional and used only when loadable at run time (no compile-time
      # dependency), so nothing is fetched from Hex to build or test this package.
      deps: [],
      description: "Run pre-compiled QNN context binaries on the Qualcomm Hexagon NPU",
      docs: [main: "HexagonTpu", extras: ["README.md", "docs/elixir.md"]]
    ]
  end

  def application do
    [extra_applications: []]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]
end
