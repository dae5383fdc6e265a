# The precompiled NIF installer behind `HEXAGON_TPU_PRECOMPILED` (docs/nerves.md, "Precompiled
# NIF"). mix.exs loads this file with Code.require_file before the project compiles (a Mix
# compiler cannot live in lib/: lib/ is what it compiles), and the ExUnit suite calls install/3
# directly with its own directories.
defmodule HexagonTpu.Mix.Precompiled do
  @moduledoc false

  # The NIF versions release archives are built for (mk/precompiled.mk): 2.16 (OTP 25's
  # erl_nif.h; OTP 25 to 28 load it) and 2.17 (OTP 27's; OTP 26 to 28), which has the halt
  # callback 2.16 lacks (enif_set_option, ERL_NIF_OPT_ON_HALT). A VM takes the newest one not
  # above its own: 2.16 on OTP 25, 2.17 on OTP 26+.
  @precompiled_nif_versions ["2.16", "2.17"]
  # `HEXAGON_TPU_PRECOMPILED=download`: the release of this version (.github/workflows/release.yml
  # publishes the archives and checksum.exs there). Set to the repository's real address.
  @release_url "https://github.com/hexagon-tpu/hexagon_tpu/releases/download/v@{version}"

  @doc """
  Installs the precompiled archive that `source` (the value of `HEXAGON_TPU_PRECOMPILED`)
  names into `app_path`/priv. Returns `:ok` or `{:error, message}`.

  Options (the defaults are what `mix compile` uses): `:version` (the project's), `:target`
  (`precompiled_target/0`), `:nif_version` (the VM's), `:project_dir` (the current directory),
  `:cache_dir` (the user cache).
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

    with {:ok, nif_version} <- nif_version,
         name = "hexagon_tpu-nif-#{nif_version}-#{target}-#{version}.tar.gz",
         {:ok, archive, checksums} <-
           locate_precompiled(source, name, version, project_dir, cache_dir),
         {:ok, sum} <- verify_precompiled(archive, name, checksums),
         :ok <- unpack_precompiled(archive, name, sum, app_path) do
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

  defp locate_precompiled(source, name, version, project_dir, cache_dir) do
    cond do
      source == "download" ->
        url = String.replace(@release_url, "@{version}", version)
        download_precompiled(url, name, project_dir, cache_dir)

      String.starts_with?(source, ["https://", "http://"]) ->
        url = String.replace(source, "@{version}", version)
        download_precompiled(url, name, project_dir, cache_dir)

      File.dir?(source) ->
        archive = Path.join(source, name)

        if File.regular?(archive),
          do: read_checksums(archive, Path.join(source, "checksum.exs")),
          else: {:error, "no #{name} in that directory"}

      File.regular?(source) ->
        read_checksums(source, Path.join(Path.dirname(source), "checksum.exs"))

      true ->
        {:error, "not a file, a directory, `download` or an https:// URL"}
    end
  end

  defp read_checksums(archive, checksum_file) do
    with {:ok, text} <- File.read(checksum_file),
         {%{} = checksums, _} <- Code.eval_string(text, [], file: checksum_file) do
      {:ok, archive, checksums}
    else
      _ -> {:error, "no readable checksum map in #{checksum_file}"}
    end
  end

  # Into the user cache. The checksums are the project's own checksum.exs when it has one (a
  # copy committed at release time), else the release's checksum.exs, which only guards against
  # corruption: it comes from the same place as the archive.
  defp download_precompiled(base, name, project_dir, dir) do
    archive = Path.join(dir, name)
    local_sums = Path.join(project_dir, "checksum.exs")
    sums = if File.regular?(local_sums), do: local_sums, else: Path.join(dir, "checksum.exs")

    with :ok <- File.mkdir_p(dir),
         :ok <- if(sums == local_sums, do: :ok, else: download("#{base}/checksum.exs", sums)),
         :ok <- if(File.regular?(archive), do: :ok, else: download("#{base}/#{name}", archive)) do
      read_checksums(archive, sums)
    end
  end

  # Mix 1.15+ prunes the code path to the project's applications before compiling; OTP's own
  # applications used here must be put back first (a no-op on older Mix).
  defp ensure_otp_apps(apps) do
    if function_exported?(Mix, :ensure_application!, 1),
      do: Enum.each(apps, &Mix.ensure_application!/1)
  end

  defp download(url, path) do
    Mix.shell().info("hexagon_tpu: downloading #{url}")
    ensure_otp_apps([:crypto, :asn1, :public_key, :ssl, :inets])
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:ssl)

    # OTP 25+: the operating system's CA certificates
    ssl = [
      verify: :verify_peer,
      cacerts: :public_key.cacerts_get(),
      customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)]
    ]

    http = [ssl: ssl, timeout: 120_000, connect_timeout: 15_000]

    case :httpc.request(:get, {String.to_charlist(url), []}, http, body_format: :binary) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        tmp = path <> ".part"
        with :ok <- File.write(tmp, body), do: File.rename(tmp, path)

      {:ok, {{_, status, _}, _headers, _body}} ->
        {:error, "download of #{url} failed: HTTP #{status}"}

      {:error, reason} ->
        {:error, "download of #{url} failed: #{inspect(reason)}"}
    end
  end

  defp verify_precompiled(archive, name, checksums) do
    ensure_otp_apps([:crypto])

    with {:ok, bytes} <- File.read(archive),
         "sha256:" <> expected <- Map.get(checksums, name, :missing),
         actual = Base.encode16(:crypto.hash(:sha256, bytes), case: :lower),
         true <- actual == String.downcase(expected) || {:mismatch, actual} do
      {:ok, actual}
    else
      {:mismatch, actual} -> {:error, "#{archive}: SHA-256 #{actual} does not match checksum.exs"}
      :missing -> {:error, "#{name} is not in checksum.exs"}
      {:error, reason} -> {:error, "#{archive}: #{:file.format_error(reason)}"}
      other -> {:error, "checksum of #{name} is not \"sha256:<hex>\": #{inspect(other)}"}
    end
  end

  # The archive's files are what `make nif` puts into priv/ (plain names only: nothing can land
  # outside priv/). A stamp in native/ (the source build's object directory) records the archive's
  # checksum and the files it put into priv/.
  defp unpack_precompiled(archive, name, sum, app_path) do
    stamp = precompiled_stamp(app_path)
    priv = Path.join(app_path, "priv")

    case File.read(stamp) do
      {:ok, text} ->
        [old_sum | files] = String.split(text, "\n", trim: true)

        if old_sum == sum and files != [] and
             Enum.all?(files, &File.exists?(Path.join(priv, &1))),
           do: :ok,
           else: unpack_precompiled(archive, name, sum, priv, stamp)

      {:error, _} ->
        unpack_precompiled(archive, name, sum, priv, stamp)
    end
  end

  defp unpack_precompiled(archive, name, sum, priv, stamp) do
    with {:ok, entries} <- :erl_tar.extract(archive, [:compressed, :memory]),
         entries = Enum.map(entries, fn {n, bytes} -> {to_string(n), bytes} end),
         [] <- Enum.reject(entries, fn {n, _} -> n =~ ~r/^[A-Za-z0-9][A-Za-z0-9._+-]*$/ end),
         true <- List.keymember?(entries, "hexagon_tpu_nif.so", 0) || :no_nif do
      forget(Path.dirname(priv))
      File.mkdir_p!(priv)

      for {n, bytes} <- entries do
        path = Path.join(priv, n)
        File.rm(path)
        File.write!(path, bytes)
        File.chmod!(path, 0o755)
      end

      File.mkdir_p!(Path.dirname(stamp))
      File.write!(stamp, Enum.map_join([sum | Enum.map(entries, &elem(&1, 0))], &[&1, "\n"]))
      Mix.shell().info("hexagon_tpu: precompiled #{name} unpacked into #{priv}")
      :ok
    else
      {:error, reason} -> {:error, "#{archive}: #{inspect(reason)}"}
      :no_nif -> {:error, "#{archive} has no hexagon_tpu_nif.so"}
      bad -> {:error, "#{archive}: unexpected entries #{inspect(Enum.map(bad, &elem(&1, 0)))}"}
    end
  end

  defp precompiled_stamp(app_path), do: Path.join([app_path, "native", "precompiled"])

  @doc """
  Back to the source build after a precompiled one: removes what the archive put into
  `app_path`/priv, so make relinks (the archive's files may be newer than the objects make
  would otherwise trust). Returns `:ok`.
  """
  def forget(app_path) do
    stamp = precompiled_stamp(app_path)

    with {:ok, text} <- File.read(stamp) do
      [_sum | files] = String.split(text, "\n", trim: true)
      for file <- files, do: File.rm(Path.join([app_path, "priv", Path.basename(file)]))
      File.rm(stamp)
    end

    :ok
  end
end
