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
defmodule HexagonTpu.Mix.Precompiled do
  @moduledoc false

  # The NIF versions release archives are built for (mk/precompiled.mk): 2.16 (OTP 25's
  # erl_nif.h; OTP 25 to 28 load it) and 2.17 (OTP 27's; OTP 26 to 28), which has the halt
  # callback 2.16 lacks (enif_set_option, ERL_NIF_OPT_ON_HALT). A VM takes the newest one not
  # above its own: 2.16 on OTP 25, 2.17 on OTP 26+.
  @precompiled_nif_versions ["2.16", "2.17"]
  # `HEXAGON_TPU_PRECOMPILED=download`: the release of this version (.github/workflows/release.yml
  # publishes the archives and checksum.exs there), under the repository that mix.exs's
  # @source_url names (the project's :source_url): one address to set before a release.
  @release_path "/releases/download/v@{version}"
  # The architectures mk/precompiled.mk makes archives for, with their ELF e_machine: every
  # shared object in an archive must be a 64-bit little-endian ELF for the target's.
  @elf_machines %{"x86_64" => {62, "x86-64"}, "aarch64" => {183, "AArch64"}}
  # Far above what the files hold (checksum.exs: one line per archive; an archive: < 1 MiB), so
  # that a wrong path cannot make the compile read a huge file into memory.
  @max_checksum_bytes 1_048_576
  @max_stamp_bytes 65_536
  @max_archive_bytes 268_435_456
  @max_redirects 5
  @checksum_format ~s(%{"<archive>" => "sha256:<64 hex digits>", ...})

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
         {:ok, where, bytes, sum} <- fetch(source, name, version, project_dir, cache_dir),
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

  # A file name that stays in its directory: no separator, no leading dot, nothing after a
  # newline (\z, not $). In a function, not a module attribute: OTP 28's compiled regexes
  # cannot be stored in one.
  defp plain_name?(name), do: Regex.match?(~r/\A[A-Za-z0-9][A-Za-z0-9._+-]*\z/, name)

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

  # ---- where the archive and its checksum come from --------------------------------------------

  # Returns {:ok, where, bytes, sha256}: the archive's bytes, already checked against the
  # checksum.exs that is trusted for that source, and where they came from (for messages).
  defp fetch(source, name, version, project_dir, cache_dir) do
    case source_kind(source) do
      {:url, base} ->
        base = base |> String.replace("@{version}", version) |> String.trim_trailing("/")
        fetch_remote(base, name, project_dir, cache_dir)

      :path ->
        fetch_local(source, name)

      {:error, message} ->
        {:error, message}
    end
  end

  @doc """
  Where `download` fetches from: `{:url, base}` (`@{version}` in it stands for the version)
  under the project's `:source_url`, or `{:error, message}` when that is not an https:// URL.
  """
  def release_url(project_config) do
    case project_config[:source_url] do
      "https://" <> _ = url ->
        {:url, String.trim_trailing(url, "/") <> @release_path}

      other ->
        {:error, "download: the project's :source_url is not an https:// URL: #{inspect(other)}"}
    end
  end

  # Only https://, checked before anything connects: the archive must not travel in clear text.
  defp source_kind("download"), do: release_url(Mix.Project.config())

  defp source_kind(source) do
    if String.contains?(source, "://") do
      case URI.parse(source) do
        %URI{scheme: "https", host: host} when is_binary(host) and host != "" ->
          {:url, source}

        %URI{scheme: "http"} ->
          {:error,
           "http:// is refused (the archive would be fetched in clear text): " <>
             "expected an https:// URL, `download`, or a local file or directory"}

        %URI{scheme: scheme} ->
          {:error, "not a URL this installer fetches (#{scheme}): expected an https:// URL"}
      end
    else
      :path
    end
  end

  # A local file or directory: the user chose it, and the checksum.exs next to the archive
  # catches a corrupted or mixed-up file.
  defp fetch_local(source, name) do
    located =
      cond do
        File.dir?(source) ->
          archive = Path.join(source, name)

          if File.exists?(archive),
            do: {:ok, archive, Path.join(source, "checksum.exs")},
            else: {:error, "no #{name} in that directory (the archive for this target and VM)"}

        File.regular?(source) and Path.basename(source) != name ->
          {:error, "#{source} is not the archive for this target and VM: expected #{name}"}

        File.regular?(source) ->
          {:ok, source, Path.join(Path.dirname(source), "checksum.exs")}

        true ->
          {:error, "not a file, a directory, `download` or an https:// URL"}
      end

    with {:ok, archive, sums} <- located,
         {:ok, checksums} <- read_checksums(sums),
         {:ok, expected} <- checksum_for(checksums, name, sums),
         {:ok, bytes} <- read_regular(archive, @max_archive_bytes),
         :ok <- verify(bytes, expected, archive, sums) do
      {:ok, archive, bytes, expected}
    end
  end

  # Over the network: only the project's own checksum.exs vouches for the archive. A checksum.exs
  # fetched from beside it would come from whoever can replace the archive, so none is fetched.
  # The cache holds only archives that matched; one that does not is fetched again.
  defp fetch_remote(base, name, project_dir, cache_dir) do
    sums = Path.join(project_dir, "checksum.exs")
    url = "#{base}/#{name}"
    cached = Path.join(cache_dir, name)

    with :ok <- trusted_checksums_present(sums, url),
         {:ok, checksums} <- read_checksums(sums),
         {:ok, expected} <- checksum_for(checksums, name, sums) do
      case cached_archive(cached, expected) do
        {:ok, bytes} ->
          {:ok, cached, bytes, expected}

        :none ->
          with {:ok, bytes} <- download(url),
               :ok <- verify(bytes, expected, url, sums),
               :ok <- File.mkdir_p(cache_dir) |> file_result(cache_dir),
               :ok <- write_atomically(cached, bytes, 0o644) do
            {:ok, url, bytes, expected}
          end
      end
    end
  end

  defp trusted_checksums_present(sums, url) do
    if File.exists?(sums) do
      :ok
    else
      {:error,
       "#{sums} does not exist: an archive fetched from #{url} is installed only when the " <>
         "project's own checksum.exs (shipped in the package or committed to the source tree) " <>
         "lists it; a checksum.exs fetched from the same place could have been replaced along " <>
         "with the archive, so none is fetched. Add the release's checksum.exs there once you " <>
         "trust it, or download the archive and its checksum.exs yourself and set " <>
         "HEXAGON_TPU_PRECOMPILED to that directory"}
    end
  end

  defp cached_archive(path, expected) do
    with true <- File.regular?(path),
         {:ok, bytes} <- File.read(path),
         true <- sha256(bytes) == expected do
      {:ok, bytes}
    else
      _ -> :none
    end
  end

  # ---- checksum.exs: read as data ----------------------------------------------------------------

  # The file format elixir_make writes and mk/precompiled.mk copies: an Elixir map literal of
  # archive names to "sha256:<hex>". It is parsed, never evaluated: anything but string literals
  # in one map (a call, an interpolation, a variable, a second expression) is refused.
  defp read_checksums(path) do
    with {:ok, text} <- read_regular(path, @max_checksum_bytes),
         {:ok, ast} <- parse_checksums(path, text),
         {:ok, pairs} <- checksum_pairs(path, ast) do
      checksum_map(path, pairs)
    end
  end

  defp parse_checksums(path, text) do
    case Code.string_to_quoted(text, file: path, existing_atoms_only: true) do
      {:ok, ast} ->
        {:ok, ast}

      {:error, {meta, message, token}} ->
        line = if is_list(meta), do: Keyword.get(meta, :line, "?"), else: meta
        message = if is_tuple(message), do: Tuple.to_list(message) |> Enum.join(), else: message

        {:error,
         "#{path}:#{line}: not valid Elixir (#{message}#{token}): expected #{@checksum_format}"}
    end
  end

  defp checksum_pairs(path, {:%{}, _meta, pairs} = ast) when is_list(pairs) do
    if Enum.all?(pairs, &match?({k, v} when is_binary(k) and is_binary(v), &1)),
      do: {:ok, pairs},
      else: not_literal(path, ast)
  end

  defp checksum_pairs(path, ast), do: not_literal(path, ast)

  defp not_literal(path, ast) do
    found = ast |> Macro.to_string() |> String.replace(~r/\s+/, " ")
    found = if String.length(found) > 80, do: String.slice(found, 0, 77) <> "...", else: found

    {:error,
     "#{path}: expected one map of string literals, #{@checksum_format} " <>
       "(the file is read as data, nothing in it is run), found: #{found}"}
  end

  defp checksum_map(path, pairs) when is_list(pairs) do
    Enum.reduce_while(pairs, {:ok, %{}}, fn {name, value}, {:ok, acc} ->
      cond do
        not plain_name?(name) ->
          {:halt, {:error, "#{path}: #{inspect(name)} is not an archive file name"}}

        Map.has_key?(acc, name) ->
          {:halt, {:error, "#{path}: #{name} is listed twice: expected one checksum per archive"}}

        true ->
          case value do
            "sha256:" <> hex ->
              if Regex.match?(~r/\A[0-9a-fA-F]{64}\z/, hex),
                do: {:cont, {:ok, Map.put(acc, name, String.downcase(hex))}},
                else: {:halt, bad_checksum_value(path, name, value)}

            _ ->
              {:halt, bad_checksum_value(path, name, value)}
          end
      end
    end)
  end

  defp bad_checksum_value(path, name, value) do
    {:error,
     "#{path}: the checksum of #{name} is #{inspect(value)}: expected \"sha256:<64 hex digits>\""}
  end

  defp checksum_for(checksums, name, sums) do
    case Map.fetch(checksums, name) do
      {:ok, hex} -> {:ok, hex}
      :error -> {:error, "#{name} is not in #{sums}"}
    end
  end

  defp verify(bytes, expected, where, sums) do
    case sha256(bytes) do
      ^expected ->
        :ok

      actual ->
        {:error,
         "#{where}: SHA-256 #{actual} does not match checksum.exs (#{sums}: sha256:#{expected})"}
    end
  end

  defp sha256(bytes) do
    ensure_otp_apps([:crypto])
    Base.encode16(:crypto.hash(:sha256, bytes), case: :lower)
  end

  # A file read whole, only when it is a regular file of sensible size: a FIFO, a device or a
  # directory in its place is an error, not a read that blocks.
  defp read_regular(path, max_bytes) do
    case File.stat(path) do
      {:ok, %File.Stat{type: :regular, size: size}} when size > max_bytes ->
        {:error, "#{path} is #{size} bytes: expected at most #{max_bytes}"}

      {:ok, %File.Stat{type: :regular}} ->
        File.read(path) |> file_result(path)

      {:ok, %File.Stat{type: type}} ->
        {:error, "#{path} is #{file_type(type)}: expected a regular file"}

      {:error, reason} ->
        {:error, "#{path}: #{:file.format_error(reason)}"}
    end
  end

  defp file_type(:directory), do: "a directory"
  defp file_type(:device), do: "a device"
  defp file_type(_), do: "a FIFO, socket or other special file"

  defp file_result(:ok, _path), do: :ok
  defp file_result({:ok, value}, _path), do: {:ok, value}
  defp file_result({:error, reason}, path), do: {:error, "#{path}: #{:file.format_error(reason)}"}

  # Written beside and renamed into place: a full disk or a crash leaves the old file or none,
  # never a truncated one.
  defp write_atomically(path, bytes, mode) do
    tmp = path <> ".tmp"

    with :ok <- File.write(tmp, bytes) |> file_result(tmp),
         :ok <- File.chmod(tmp, mode) |> file_result(tmp),
         :ok <- File.rename(tmp, path) |> file_result(path) do
      :ok
    else
      error ->
        File.rm(tmp)
        error
    end
  end

  # ---- download ----------------------------------------------------------------------------------

  # Mix 1.15+ prunes the code path to the project's applications before compiling; OTP's own
  # applications used here must be put back first (a no-op on older Mix).
  defp ensure_otp_apps(apps) do
    if function_exported?(Mix, :ensure_application!, 1),
      do: Enum.each(apps, &Mix.ensure_application!/1)
  end

  defp download(url) do
    Mix.shell().info("hexagon_tpu: downloading #{url}")
    ensure_otp_apps([:crypto, :asn1, :public_key, :ssl, :inets])
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:ssl)
    download(url, url, @max_redirects)
  end

  # Redirects are followed here, not by httpc: httpc would follow one from https:// to http://
  # and fetch the archive in clear text.
  defp download(url, first, redirects_left) do
    # OTP 25+: the operating system's CA certificates
    ssl = [
      verify: :verify_peer,
      cacerts: :public_key.cacerts_get(),
      customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)]
    ]

    http = [ssl: ssl, timeout: 120_000, connect_timeout: 15_000, autoredirect: false]

    case :httpc.request(:get, {String.to_charlist(url), []}, http, body_format: :binary) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        {:ok, body}

      {:ok, {{_, status, _}, headers, _body}} when status in [301, 302, 303, 307, 308] ->
        with {:ok, next} <- redirect_target(url, headers) do
          if redirects_left > 0,
            do: download(next, first, redirects_left - 1),
            else: {:error, "download of #{first} failed: more than #{@max_redirects} redirects"}
        end

      {:ok, {{_, status, _}, _headers, _body}} ->
        {:error, "download of #{url} failed: HTTP #{status}"}

      {:error, reason} ->
        {:error, "download of #{url} failed: #{inspect(reason)}"}
    end
  end

  defp redirect_target(url, headers) do
    case for({k, v} <- headers, String.downcase(to_string(k)) == "location", do: to_string(v)) do
      [location | _] ->
        next = url |> URI.merge(location) |> URI.to_string()

        case URI.parse(next) do
          %URI{scheme: "https"} ->
            {:ok, next}

          _ ->
            {:error, "#{url} redirects to #{next}: refused, only https:// is followed"}
        end

      [] ->
        {:error, "download of #{url} failed: a redirect without a location"}
    end
  end

  # ---- unpacking into priv/ ----------------------------------------------------------------------

  # The archive's files are what `make nif` puts into priv/ (plain names only: nothing can land
  # outside priv/). A stamp in native/ (the source build's object directory) records the archive's
  # checksum and the files it put into priv/.
  defp unpack(where, bytes, name, sum, app_path, target) do
    priv = Path.join(app_path, "priv")

    with {:ok, stamp} <- read_stamp(app_path) do
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
    stamp = stamp_path(app_path)

    with {:ok, tar} <- gunzip(where, bytes),
         {:ok, files} <- tar_files(where, tar),
         :ok <- check_elf(where, files, target),
         :ok <- forget(app_path),
         :ok <- File.mkdir_p(priv) |> file_result(priv),
         :ok <- write_files(priv, files),
         :ok <- File.mkdir_p(Path.dirname(stamp)) |> file_result(Path.dirname(stamp)),
         stamp_text = Enum.map_join([sum | Enum.map(files, &elem(&1, 0))], &[&1, "\n"]),
         :ok <- write_atomically(stamp, stamp_text, 0o644) do
      Mix.shell().info("hexagon_tpu: precompiled #{name} unpacked into #{priv}")
      :ok
    end
  end

  defp write_files(priv, files) do
    Enum.reduce_while(files, :ok, fn {n, bytes}, :ok ->
      case write_atomically(Path.join(priv, n), bytes, 0o755) do
        :ok -> {:cont, :ok}
        error -> {:halt, error}
      end
    end)
  end

  defp gunzip(where, <<0x1F, 0x8B, _::binary>> = bytes) do
    {:ok, :zlib.gunzip(bytes)}
  rescue
    ErlangError ->
      {:error, "#{where}: the gzip stream is truncated or corrupt: expected a whole .tar.gz"}
  end

  defp gunzip(where, _bytes) do
    {:error, "#{where} is not gzip-compressed: expected a .tar.gz made by `make precompiled`"}
  end

  # Every entry a regular file with a plain name, each name once, hexagon_tpu_nif.so among them.
  defp tar_files(where, tar) do
    with {:ok, table} <- :erl_tar.table({:binary, tar}, [:verbose]) |> tar_result(where),
         entries = Enum.map(table, fn e -> {to_string(elem(e, 0)), elem(e, 1)} end),
         :ok <- check_entries(where, entries),
         {:ok, files} <- :erl_tar.extract({:binary, tar}, [:memory]) |> tar_result(where) do
      {:ok, Enum.map(files, fn {n, data} -> {to_string(n), data} end)}
    end
  end

  defp tar_result({:ok, value}, _where), do: {:ok, value}

  defp tar_result({:error, :eof}, where),
    do: {:error, "#{where}: the tar archive inside ends early: expected a whole .tar.gz"}

  defp tar_result({:error, reason}, where),
    do: {:error, "#{where}: not a valid tar archive (#{:erl_tar.format_error(reason)})"}

  defp check_entries(where, entries) do
    names = Enum.map(entries, &elem(&1, 0))
    odd = Enum.reject(names, &plain_name?/1)
    special = for {n, type} <- entries, type != :regular, do: "#{n} (#{type})"

    twice =
      names |> Enum.frequencies() |> Enum.filter(fn {_, c} -> c > 1 end) |> Enum.map(&elem(&1, 0))

    cond do
      odd != [] ->
        {:error,
         "#{where}: unexpected entries #{inspect(odd)}: expected plain file names (they go into priv/)"}

      special != [] ->
        {:error, "#{where}: #{Enum.join(special, ", ")}: expected only regular files"}

      twice != [] ->
        {:error,
         "#{where}: #{Enum.join(Enum.sort(twice), ", ")} more than once: expected each file once"}

      "hexagon_tpu_nif.so" not in names ->
        {:error, "#{where} has no hexagon_tpu_nif.so"}

      true ->
        :ok
    end
  end

  # Shared objects (and any other ELF file, such as htpu-refbuild) must be 64-bit little-endian
  # ELF for the target's architecture: a wrong archive is refused here, not at load time.
  defp check_elf(where, files, {target, {machine, label}}) do
    Enum.reduce_while(files, :ok, fn {n, bytes}, :ok ->
      expected = "a 64-bit little-endian ELF for #{label} (machine #{machine}, target #{target})"

      problem =
        case bytes do
          <<0x7F, "ELF", _::binary>> when byte_size(bytes) < 64 ->
            "a truncated ELF file (#{byte_size(bytes)} bytes)"

          <<0x7F, "ELF", 2, 1, _::binary-size(10), type::little-16, ^machine::little-16,
            _::binary>> ->
            if String.ends_with?(n, ".so") and type != 3,
              do: "an ELF of type #{type}, not a shared object (ET_DYN)"

          <<0x7F, "ELF", 2, 1, _::binary-size(12), other::little-16, _::binary>> ->
            "an ELF for machine #{other}"

          <<0x7F, "ELF", 1, _::binary>> ->
            "a 32-bit ELF"

          <<0x7F, "ELF", 2, 2, _::binary>> ->
            "a big-endian ELF"

          <<0x7F, "ELF", class, data, _::binary>> ->
            "an ELF of class #{class} and byte order #{data}"

          _ ->
            if String.ends_with?(n, ".so"), do: "not an ELF file"
        end

      if problem,
        do: {:halt, {:error, "#{where}: #{n} is #{problem}: expected #{expected}"}},
        else: {:cont, :ok}
    end)
  end

  # ---- the stamp: what a precompiled install put into priv/ --------------------------------------

  @doc false
  def stamp_path(app_path), do: Path.join([app_path, "native", "precompiled"])

  # {:ok, nil} when there is none, {:ok, {sha256, files}}, or an error that names the file:
  # anything else in it (empty after a full disk, a line that is not a file name) is not
  # guessed at, since which files in priv/ came from an archive is exactly what it records.
  defp read_stamp(app_path) do
    stamp = stamp_path(app_path)

    case File.lstat(stamp) do
      {:error, :enoent} ->
        {:ok, nil}

      _ ->
        with {:ok, text} <- read_regular(stamp, @max_stamp_bytes) do
          [sum | rest] = String.split(text, "\n")
          {files, last} = Enum.split(rest, -1)

          if Regex.match?(~r/\A[0-9a-f]{64}\z/, sum) and files != [] and last == [""] and
               Enum.all?(files, &plain_name?/1),
             do: {:ok, {sum, files}},
             else: bad_stamp(stamp, text)
        end
    end
  end

  defp bad_stamp(stamp, text) do
    found = if text == "", do: "an empty file", else: inspect(String.slice(text, 0, 80))

    {:error,
     "#{stamp} (the record of a precompiled install) is damaged: expected the archive's " <>
       "SHA-256 and then the names of the files it put into priv/, one per line; found " <>
       "#{found}. Delete it and the priv/ directory next to it, then compile again"}
  end

  @doc """
  Back to the source build after a precompiled one: removes what the archive put into
  `app_path`/priv, so make relinks (the archive's files may be newer than the objects make
  would otherwise trust). Returns `:ok` or `{:error, message}` when the stamp is damaged.
  """
  def forget(app_path) do
    with {:ok, stamp} <- read_stamp(app_path) do
      case stamp do
        nil ->
          :ok

        {_sum, files} ->
          for file <- files, do: File.rm(Path.join([app_path, "priv", file]))
          File.rm(stamp_path(app_path)) |> file_result(stamp_path(app_path))
      end
    end
  end
end
