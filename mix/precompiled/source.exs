# Where the archive and the checksum that vouches for it come from (mix/precompiled.exs loads
# this file): a local file or directory, whose checksum.exs is beside it, or an https:// URL
# (`download`: the project's release), for which only the project's own checksum.exs counts.
# Returns the archive's bytes already checked. Calls Checksums, Download and Files.
defmodule HexagonTpu.Mix.Precompiled.Source do
  @moduledoc false

  alias HexagonTpu.Mix.Precompiled.{Checksums, Download, Files}

  # `HEXAGON_TPU_PRECOMPILED=download`: the release of this version (.github/workflows/release.yml
  # publishes the archives and checksum.exs there), under the repository that mix.exs's
  # @source_url names (the project's :source_url): one address to set before a release.
  @release_path "/releases/download/v@{version}"
  # Far above what an archive holds (< 1 MiB), so that a wrong path cannot make the compile
  # read a huge file into memory.
  @max_archive_bytes 268_435_456

  # Returns {:ok, where, bytes, sha256}: the archive's bytes, already checked against the
  # checksum.exs that is trusted for that source, and where they came from (for messages).
  def fetch(source, name, version, project_dir, cache_dir) do
    case kind(source) do
      {:url, base} ->
        base = base |> String.replace("@{version}", version) |> String.trim_trailing("/")
        fetch_remote(base, name, project_dir, cache_dir)

      :path ->
        fetch_local(source, name)

      {:error, message} ->
        {:error, message}
    end
  end

  # HexagonTpu.Mix.Precompiled.release_url/1, whose doc this is.
  def release_url(project_config) do
    case project_config[:source_url] do
      "https://" <> _ = url ->
        {:url, String.trim_trailing(url, "/") <> @release_path}

      other ->
        {:error, "download: the project's :source_url is not an https:// URL: #{inspect(other)}"}
    end
  end

  # Only https://, checked before anything connects: the archive must not travel in clear text.
  defp kind("download"), do: release_url(Mix.Project.config())

  defp kind(source) do
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
    with {:ok, archive, sums} <- locate(source, name),
         {:ok, checksums} <- Checksums.read(sums),
         {:ok, expected} <- Checksums.expected(checksums, name, sums),
         {:ok, bytes} <- Files.read_regular(archive, @max_archive_bytes),
         :ok <- Checksums.verify(bytes, expected, archive, sums) do
      {:ok, archive, bytes, expected}
    end
  end

  # {:ok, archive, its checksum.exs}.
  defp locate(source, name) do
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
  end

  # Over the network: only the project's own checksum.exs vouches for the archive. A checksum.exs
  # fetched from beside it would come from whoever can replace the archive, so none is fetched.
  # The cache holds only archives that matched; one that does not is fetched again.
  defp fetch_remote(base, name, project_dir, cache_dir) do
    sums = Path.join(project_dir, "checksum.exs")
    url = "#{base}/#{name}"
    cached = Path.join(cache_dir, name)

    with :ok <- trusted_checksums_present(sums, url),
         {:ok, checksums} <- Checksums.read(sums),
         {:ok, expected} <- Checksums.expected(checksums, name, sums) do
      case cached_archive(cached, expected) do
        {:ok, bytes} ->
          {:ok, cached, bytes, expected}

        :none ->
          with {:ok, bytes} <- Download.get(url),
               :ok <- Checksums.verify(bytes, expected, url, sums),
               :ok <- File.mkdir_p(cache_dir) |> Files.result(cache_dir),
               :ok <- Files.write_atomically(cached, bytes, 0o644) do
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
         true <- Files.sha256(bytes) == expected do
      {:ok, bytes}
    else
      _ -> :none
    end
  end
end
