# The precompiled NIF installer (HexagonTpu.Mix.Precompiled) is a file of its own, loaded here:
# mix.exs runs before anything in the project is compiled, so the compiler below can only use
# code it loads itself, and the installer is long enough to deserve its own file and tests.
Code.require_file("mix/precompiled.exs", __DIR__)

defmodule Mix.Tasks.Compile.HexagonTpuNif do
  @shortdoc "Builds the hexagon_tpu NIF and reference backend into priv/ with make"
  @moduledoc """
  Runs `make nif` (mk/nif.mk) so `mix compile` builds `priv/hexagon_tpu_nif.so` and copies the
  reference backend (`libhtpu_refbackend.so`, `libhtpu_refsystem.so`, its FastRPC stand-in
  `libhtpu_refcdsprpc.so`, `htpu-refbuild`) next to it. No Hex build tool: the project's own Makefile does the work.

  Environment honoured (Nerves sets these for the target): `CC`, `CROSSCOMPILE`, `CFLAGS`,
  `LDFLAGS`, `ERTS_INCLUDE_DIR`, `MAKE`.

  Precompiled instead of `make` when `HEXAGON_TPU_PRECOMPILED` is set (unset: the source build,
  no network): a `.tar.gz` made by `make precompiled` (mk/precompiled.mk) or a directory of them,
  with the `checksum.exs` next to it; or `download` (or an `https://` base URL) to fetch the
  archive of this version from the release, which only the project's own `checksum.exs` can
  vouch for. The archive is the one for the current target (`TARGET_ARCH`-`TARGET_OS`-`TARGET_ABI`
  as Nerves sets them, else the VM's architecture) and NIF version, named
  `hexagon_tpu-nif-<nif>-<target>-<version>.tar.gz`; its SHA-256 must match `checksum.exs`
  (read as data, never run), else the compile fails (mix/precompiled.exs). See docs/nerves.md,
  "Precompiled NIF".
  """
  use Mix.Task.Compiler

  @impl Mix.Task.Compiler
  def run(_args) do
    app_path = Mix.Project.app_path()

    case System.get_env("HEXAGON_TPU_PRECOMPILED", "") do
      off when off in ["", "0", "false"] ->
        case HexagonTpu.Mix.Precompiled.forget(app_path) do
          :ok -> build(app_path)
          {:error, message} -> error(message, HexagonTpu.Mix.Precompiled.stamp_path(app_path))
        end

      source ->
        case HexagonTpu.Mix.Precompiled.install(source, app_path) do
          :ok -> {:ok, []}
          {:error, message} -> error(message, Path.join(File.cwd!(), "mix.exs"))
        end
    end
  end

  defp build(app_path) do
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
        error(message, Path.join(File.cwd!(), "mk/nif.mk"))
    end
  end

  defp error(message, file) do
    Mix.shell().error(message)

    diagnostic = %Mix.Task.Compiler.Diagnostic{
      compiler_name: "hexagon_tpu_nif",
      file: file,
      message: message,
      position: nil,
      severity: :error
    }

    {:error, [diagnostic]}
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
  # The repository the release workflow runs in: mix/precompiled.exs's @release_url names the
  # same one (docs/nerves.md, Precompiled NIF).
  @source_url "https://github.com/hexagon-tpu/hexagon_tpu"

  def project do
    [
      app: :hexagon_tpu,
      version: @version,
      elixir: "~> 1.14",
      package: package(),
      source_url: @source_url,
      compilers: [:hexagon_tpu_nif | Mix.compilers()],
      elixirc_paths: elixirc_paths(Mix.env()),
      # Elixir 1.19's `mix test` looks at every .ex/.exs under test/ and warns about files that
      # are neither tests nor ignored: test/precompiled/ holds scripts for
      # test/precompiled/run.sh, test/optional/ a stress script and test/package/ the scripts
      # of `make test-package`, not ExUnit tests. (Older Mix ignores the key.)
      test_ignore_filters: [~r"^test/precompiled/", ~r"^test/optional/", ~r"^test/package/"],
      start_permanent: Mix.env() == :prod,
      # Nx and :telemetry are optional applications (application/0), used only when present at
      # run time (no compile-time dependency): nothing is fetched from Hex to build or test this.
      deps: [],
      description: "Run pre-compiled QNN context binaries on the Qualcomm Hexagon NPU",
      docs: [main: "HexagonTpu", extras: ["README.md", "docs/elixir.md"]]
    ]
  end

  def application do
    [mod: {HexagonTpu.Application, []}] ++ optional_applications([:nx, :telemetry])
  end

  # Nx and :telemetry are OTP optional applications (OTP 24+): when they are in the code path
  # (the user's deps, or ERL_LIBS) they are started before hexagon_tpu, and when they are not,
  # nothing fails. Not `optional: true` deps: those make `mix compile` fetch from Hex, and this
  # package must build and test offline without them (docs/elixir.md, Nx and :telemetry).
  # Elixir 1.15+ writes `{app, :optional}` extra applications into the .app's `:applications`
  # and `:optional_applications` (and keeps their code paths when it prunes); 1.14 leaves them
  # out of the .app, so there both keys are written as they are.
  defp optional_applications(apps) do
    if Version.compare(System.version(), "1.15.0") == :lt,
      do: [extra_applications: apps, optional_applications: apps],
      else: [extra_applications: Enum.map(apps, &{&1, :optional})]
  end

  # What `mix hex.build` puts in the package: exactly what `mix compile` needs to build from
  # source (the NIF, the C core it links and the reference backend users' host tests run on),
  # with the docs the README points to. Hex's default list would leave out mk/, include/,
  # common/, reference/ and mix/, and the compile would fail. `make test-package`
  # (mk/package.mk) builds and uses the package made from this list.
  defp package do
    [
      files:
        ["lib", "mix/precompiled.exs", "mix.exs", "Makefile", "mk/nif.mk", "mk/cross.mk"] ++
          ["include", "src", "common", "c_src", "reference"] ++
          ["README.md", "LICENSE", "CHANGELOG.md", "docs/*.md"] ++ checksum_file(),
      licenses: ["Apache-2.0"],
      links: %{
        "GitHub" => @source_url,
        "Changelog" => "#{@source_url}/blob/v#{@version}/CHANGELOG.md"
      }
    ]
  end

  # checksum.exs vouches for the release's precompiled archives (`HEXAGON_TPU_PRECOMPILED=
  # download`): the maintainers add it from the release workflow before publishing, and the
  # package ships it then. Without it the package still builds from source, and download mode
  # fails naming the missing file. (Hex refuses to build with a listed file that does not exist.)
  defp checksum_file do
    if File.exists?(Path.join(__DIR__, "checksum.exs")), do: ["checksum.exs"], else: []
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]
end
