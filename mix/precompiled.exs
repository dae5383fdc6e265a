# The precompiled NIF installer behind `HEXAGON_TPU_PRECOMPILED` (docs/nerves.md, "Precompiled
# NIF"). mix.exs loads this file with Code.require_file before the project compiles (a Mix
# compiler cannot live in lib/: lib/ is what it compiles), and the ExUnit suite calls install/3
# directly with its own directories (test/mix/precompiled_test.exs).
#
# What it trusts: the SHA-256 in a checksum.exs that is read as data, never run. For an archive
# that comes over the network that checksum.exs is the project's own (the one that ships in the
# package or source tree), never one fetched from beside the archive: whoever can replace a
# release asset could replace both. A local file or directory is the user's own choice, and
# the checksum.exs in it only catches corrupted or mixed-up files.
#
# This file is the installer's entry points and the order of its steps; the steps are in
# mix/precompiled/, one file each, each calling only those loaded before it:
#   files.exs      reads and writes that cannot block or leave a truncated file; SHA-256
#   checksums.exs  checksum.exs parsed as data; an archive's bytes checked against it
#   download.exs   https:// only, redirects followed only to https://
#   source.exs     a local file or directory, or a URL: the archive's bytes, checked
#   archive.exs    the .tar.gz's files, checked before any is written
#   stamp.exs      the record of what an install put into priv/
for part <- ~w(files checksums download source archive stamp),
    do: Code.require_file("precompiled/#{part}.exs", __DIR__)

defmodule HexagonTpu.Mix.Precompiled do
  @moduledoc false

  alias HexagonTpu.Mix.Precompiled.{Archive, Files, Source, Stamp}

  # The NIF versions release archives are built for (mk/precompiled.mk): 2.16 (OTP 25's
  # erl_nif.h; OTP 25 to 28 load it) and 2.17 (OTP 27's; OTP 26 to 28), which has the halt
  # callback 2.16 lacks (enif_set_option, ERL_NIF_OPT_ON_HALT). A VM takes the newest one not
  # above its own: 2.16 on OTP 25, 2.17 on OTP 26+.
  @precompiled_nif_versions ["2.16", "2.17"]
  # The architectures mk/precompiled.mk makes archives for, with their ELF e_machine: every
  # shared object in an archive must be a 64-bit little-endian ELF for the target's.
  @elf_machines %{"x86_64" => {62, "x86-64"}, "aarch64" => {183, "AArch64"}}

  @doc """
  Installs the precompiled archive that `source` (the value of `HEXAGON_TPU_PRECOMPILED`)
  names into `app_path`/priv. Returns `:ok` or `{:error, message}`.

  Options (the defaults are what `mix compile` uses): `:version` (the project's), `:target`
  (`precompiled_target/0`), `:nif_version` (the VM's), `:project_dir` (the current directory:
  its `checksum.exs` vouches for downloaded archives), `:cache_dir` (the user cache).
  """
  def install(source, app_path, opts \\ []) do
    version = Keyword.get_lazy(opts, :version, fn -> Mix.Project.config()[:version] end)
    target = Keyword.get_lazy(opts, :target, &precompiled_target/0)
    project_dir = Keyword.get_lazy(opts, :project_dir, &File.cwd!/0)
    cache_dir = Keyword.get_lazy(opts, :cache_dir, &default_cache_dir/0)

    nif_version =
      case Keyword.fetch(opts, :nif_version) do
        {:ok, v} -> {:ok, v}
        :error -> precompiled_nif_version()
      end

    with {:ok, machine} <- elf_machine(target),
         {:ok, nif_version} <- nif_version,
         name = "hexagon_tpu-nif-#{nif_version}-#{target}-#{version}.tar.gz",
         {:ok, where, bytes, sum} <- Source.fetch(source, name, version, project_dir, cache_dir),
         :ok <- unpack(where, bytes, name, sum, app_path, {target, machine}) do
      :ok
    else
      {:error, message} -> {:error, "HEXAGON_TPU_PRECOMPILED=#{source}: #{message}"}
    end
  end

  # cc_precompiler's names: TARGET_* as Nerves exports them for the target, else the VM's own
  # architecture ("x86_64-pc-linux-gnu" -> "x86_64-linux-gnu").
  def precompiled_target do
    case {System.get_env("TARGET_ARCH"), System.get_env("TARGET_OS")} do
      {arch, os} when is_binary(arch) and is_binary(os) ->
        "#{arch}-#{os}-#{System.get_env("TARGET_ABI", "gnu")}"

      _ ->
        case String.split(to_string(:erlang.system_info(:system_architecture)), "-") do
          [arch, _vendor, os, abi | _] -> "#{arch}-#{os}-#{abi}"
          parts -> Enum.join(parts, "-")
        end
    end
  end

  @doc """
  Where `download` fetches from: `{:url, base}` (`@{version}` in it stands for the version)
  under the project's `:source_url`, or `{:error, message}` when that is not an https:// URL.
  """
  defdelegate release_url(project_config), to: Source

  @doc false
  defdelegate stamp_path(app_path), to: Stamp, as: :path

  @doc """
  Back to the source build after a precompiled one: removes what the archive put into
  `app_path`/priv, so make relinks (the archive's files may be newer than the objects make
  would otherwise trust). Returns `:ok` or `{:error, message}` when the stamp is damaged.
  """
  defdelegate forget(app_path), to: Stamp

  defp elf_machine(target) do
    arch = target |> String.split("-") |> hd()

    case Map.fetch(@elf_machines, arch) do
      {:ok, machine} ->
        {:ok, machine}

      :error ->
        known = @elf_machines |> Map.keys() |> Enum.sort() |> Enum.join(" and ")
        {:error, "no precompiled NIF for target #{target}: archives are made for #{known}"}
    end
  end

  defp precompiled_nif_version do
    current = to_string(:erlang.system_info(:nif_version))
    parse = fn v -> v |> String.split(".") |> Enum.map(&String.to_integer/1) end
    [major, minor] = parse.(current)

    usable =
      for v <- @precompiled_nif_versions, [^major, m] <- [parse.(v)], m <= minor, do: {m, v}

    case Enum.max(usable, fn -> nil end) do
      {_, v} -> {:ok, v}
      nil -> {:error, "no precompiled NIF for this VM's NIF version #{current}"}
    end
  end

  defp default_cache_dir do
    Path.join(:filename.basedir(:user_cache, ~c"hexagon_tpu") |> to_string(), "precompiled")
  end

  # ---- unpacking into priv/ ----------------------------------------------------------------------

  # The archive's files are what `make nif` puts into priv/ (plain names only: nothing can land
  # outside priv/). The stamp records the archive's checksum and the files it put into priv/:
  # an archive already installed, its files all there, is not unpacked again.
  defp unpack(where, bytes, name, sum, app_path, target) do
    priv = Path.join(app_path, "priv")

    with {:ok, stamp} <- Stamp.read(app_path) do
      case stamp do
        {^sum, files} ->
          if Enum.all?(files, &File.exists?(Path.join(priv, &1))),
            do: :ok,
            else: unpack(where, bytes, name, sum, app_path, priv, target)

        _ ->
          unpack(where, bytes, name, sum, app_path, priv, target)
      end
    end
  end

  defp unpack(where, bytes, name, sum, app_path, priv, target) do
    with {:ok, files} <- Archive.files(where, bytes, target),
         :ok <- Stamp.forget(app_path),
         :ok <- File.mkdir_p(priv) |> Files.result(priv),
         :ok <- write_files(priv, files),
         :ok <- Stamp.write(app_path, sum, Enum.map(files, &elem(&1, 0))) do
      Mix.shell().info("hexagon_tpu: precompiled #{name} unpacked into #{priv}")
      :ok
    end
  end

  defp write_files(priv, files) do
    Enum.reduce_while(files, :ok, fn {n, bytes}, :ok ->
      case Files.write_atomically(Path.join(priv, n), bytes, 0o755) do
        :ok -> {:cont, :ok}
        error -> {:halt, error}
      end
    end)
  end
end
