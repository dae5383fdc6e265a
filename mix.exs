# The precompiled NIF installer (HexagonTpu.Mix.Precompiled) is files of its own, loaded here:
# mix.exs runs before anything in the project is compiled, so the compiler below can only use
# code it loads itself, and the installer is long enough to deserve its own files and tests.
# mix/precompiled.exs loads its parts (mix/precompiled/). Not in lib/mix/ as a Mix task of a
# dependency would be: lib/ is what this project's compilers compile after the NIF, so a module
# there would be compiled a second time ("redefining module") and shipped in the application.
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

    # -s: a build with nothing to do prints nothing (not make's "Nothing to be done for
    # 'nif'." before every `mix run` and `mix test`); a build that compiles still prints its
    # "  CC file" lines, which are commands of their own (Makefile). V=1 (the verbose build,
    # every command echoed) keeps make's own output too.
    quiet = if System.get_env("V") == "1", do: [], else: ["-s"]

    args =
      quiet ++
        [
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
  # The repository: the package's links, HexDocs' source links (at the tag v<version>), and the
  # release that `HEXAGON_TPU_PRECOMPILED=download` fetches from (mix/precompiled.exs reads the
  # project's :source_url). A placeholder until the repository is public: set it here, the one
  # place, before a release.
  @source_url "https://github.com/hexagon-tpu/hexagon_tpu"

  # HexDocs (`make docs`, mk/docs.mk): every guide in docs/ is an extra, in the group a reader
  # looks for it under, with the short title the sidebar shows. A guide in no group fails
  # `mix docs` (docs/0).
  @guide_groups [
    "Getting started": [
      {"README.md", "Overview"},
      {"docs/elixir.md", "From Elixir"},
      {"CHANGELOG.md", "Changelog"}
    ],
    "On the board": [
      {"docs/board.md", "Running on the board"},
      {"docs/htpu.md", "htpu, the command-line tool"},
      {"docs/context-binaries.md", "Making context binaries"}
    ],
    Nerves: [{"docs/nerves.md", "Nerves (Radxa Dragon Q6A)"}],
    Serving: [{"docs/serving.md", "Batching and serving"}],
    Vision: [{"docs/vision.md", "From camera frames to detections"}],
    Performance: [
      {"docs/performance.md", "Performance"},
      {"docs/profiling.md", "Profiling: where the time goes"},
      {"docs/quantization.md", "Quantization kernels"}
    ],
    Reliability: [{"docs/reliability.md", "Reliability and tests"}],
    "C API and formats": [
      {"docs/architecture.md", "Architecture"},
      {"docs/abi.md", "The QNN ABI"},
      {"docs/reference-backend.md", "The reference backend"},
      {"docs/reference-format.md", "The reference model format"}
    ]
  ]

  # Every documented module (no `@moduledoc false`) must be in a group: ExDoc puts a module of
  # no group alone at the top of the sidebar, so `mix docs` fails naming it (docs/0).
  @module_groups [
    "Models and inference": [
      HexagonTpu,
      HexagonTpu.Graph,
      HexagonTpu.Call,
      HexagonTpu.Context,
      HexagonTpu.Runtime,
      HexagonTpu.TensorInfo,
      HexagonTpu.SharedIO,
      HexagonTpu.Error
    ],
    Serving: [HexagonTpu.Serving],
    Vision: [HexagonTpu.Vision, HexagonTpu.Vision.Frame],
    Observability: [
      HexagonTpu.Stats,
      HexagonTpu.Monitor,
      HexagonTpu.Telemetry,
      HexagonTpu.Profile
    ]
  ]

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
      # test/precompiled/run.sh, test/optional/ a stress script, test/package/ the scripts of
      # `make test-package` and test/docs/ those of `make test-docs`, not ExUnit tests. (Older
      # Mix ignores the key.)
      test_ignore_filters: [
        ~r"^test/precompiled/",
        ~r"^test/optional/",
        ~r"^test/package/",
        ~r"^test/docs/"
      ],
      start_permanent: Mix.env() == :prod,
      # Nx and :telemetry are optional applications (application/0), used only when present at
      # run time (no compile-time dependency): nothing is fetched from Hex to build or test this,
      # but in the release workflow's Hex job (release_deps/0).
      deps: release_deps(),
      description: "Run pre-compiled QNN context binaries on the Qualcomm Hexagon NPU",
      docs: &docs/0
    ]
  end

  defp docs do
    guides = for {_group, files} <- @guide_groups, {file, title} <- files, do: {file, title}
    all = Path.wildcard(Path.join(__DIR__, "docs/*.md"))
    ungrouped = Enum.map(all, &Path.relative_to(&1, __DIR__)) -- Enum.map(guides, &elem(&1, 0))

    if ungrouped != [],
      do: Mix.raise("mix.exs: guides in no group of @guide_groups: #{inspect(ungrouped)}")

    grouped = for {_group, modules} <- @module_groups, module <- modules, do: module

    case documented_modules() -- grouped do
      [] ->
        :ok

      modules ->
        Mix.raise(
          "mix.exs: documented modules in no group of @module_groups (ExDoc would show " <>
            "them alone at the top of the sidebar): #{Enum.map_join(modules, ", ", &inspect/1)}"
        )
    end

    [
      main: "HexagonTpu",
      source_url: @source_url,
      source_ref: "v#{@version}",
      extras: for({file, title} <- guides, do: {file, [title: title]}),
      groups_for_extras:
        for({group, files} <- @guide_groups, do: {group, Enum.map(files, &elem(&1, 0))}),
      groups_for_modules: @module_groups,
      # Nx and :telemetry are on the code path while `make docs` runs (mk/docs.mk), so their
      # modules and functions named in the docs (`Nx.Serving`, `:telemetry.attach/4`) link to
      # their HexDocs: plain links, at the versions the tests run with; nothing is fetched.
      deps: [nx: "https://hexdocs.pm/nx/0.7.2", telemetry: "https://hexdocs.pm/telemetry/1.3.0"],
      # Internal modules (@moduledoc false) the guides name for readers of the source: shown
      # as code, without a link to a page that does not exist.
      skip_code_autolink_to: [
        "HexagonTpu.NIF",
        "Elixir.HexagonTpu.NIF",
        "HexagonTpu.KeyLock",
        "HexagonTpu.Serving.BatchStack",
        # the compiler in mix.exs, not part of the application
        "Mix.Tasks.Compile.HexagonTpuNif"
      ]
    ]
  end

  # The modules ExDoc documents: those compiled (`mix docs` compiles first) whose moduledoc is
  # not hidden (`@moduledoc false`); a module without any @moduledoc is shown too.
  defp documented_modules do
    for beam <- Path.wildcard(Path.join(Mix.Project.compile_path(), "*.beam")),
        {:docs_v1, _, _, _, moduledoc, _, _} <- [Code.fetch_docs(beam)],
        moduledoc != :hidden,
        do: beam |> Path.basename(".beam") |> String.to_atom()
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
  # with the docs the README points to and the model text its "In your project" example
  # builds. Hex's default list would leave out mk/, include/,
  # common/, reference/ and mix/, and the compile would fail. `make test-package`
  # (mk/package.mk) builds and uses the package made from this list.
  defp package do
    [
      files:
        ["lib", "mix.exs", "mix/precompiled.exs", "mix/precompiled", "Makefile"] ++
          ["mk/nif.mk", "mk/cross.mk", "include", "src", "common", "c_src", "reference"] ++
          ["README.md", "LICENSE", "CHANGELOG.md", "docs/*.md", "examples/add.txt"] ++
          checksum_file(),
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

  # Only in the release workflow's Hex job (HEXAGON_TPU_HEX_RELEASE=1, set by
  # .github/workflows/release.yml; docs/nerves.md, "Making a release"): `mix hex.publish` builds
  # HexDocs with `mix docs`, which needs ExDoc as a dependency of this project, and the pages link
  # Nx and :telemetry to their HexDocs when those are on the code path (as `make docs` has them
  # from the vendored sources). All three `only: :dev`: Hex leaves dependencies that are not for
  # :prod out of the package's requirements, so a user of the package gets none of them; and
  # without the variable (`make test`, CI, a user's build) there are none, so nothing needs Hex.
  # ExDoc 0.36 and Nx 0.7 are the last releases for Elixir 1.14, the workflow's (Debian 12).
  defp release_deps do
    if System.get_env("HEXAGON_TPU_HEX_RELEASE") == "1" do
      [
        {:ex_doc, "~> 0.36.1", only: :dev, runtime: false},
        {:nx, "~> 0.7.2", only: :dev},
        {:telemetry, "~> 1.3", only: :dev}
      ]
    else
      []
    end
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]
end
