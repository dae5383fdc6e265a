# The stamp: what a precompiled install put into priv/ (mix/precompiled.exs loads this file).
# A file in native/ (the source build's object directory) holding the archive's SHA-256 and
# then the names of the files it wrote, one a line; read back to skip an install already done
# and to remove those files when the source build takes over again. Calls Files.
defmodule HexagonTpu.Mix.Precompiled.Stamp do
  @moduledoc false

  alias HexagonTpu.Mix.Precompiled.Files

  @max_stamp_bytes 65_536

  def path(app_path), do: Path.join([app_path, "native", "precompiled"])

  # {:ok, nil} when there is none, {:ok, {sha256, files}}, or an error that names the file:
  # anything else in it (empty after a full disk, a line that is not a file name) is not
  # guessed at, since which files in priv/ came from an archive is exactly what it records.
  def read(app_path) do
    stamp = path(app_path)

    case File.lstat(stamp) do
      {:error, :enoent} ->
        {:ok, nil}

      _ ->
        with {:ok, text} <- Files.read_regular(stamp, @max_stamp_bytes) do
          [sum | rest] = String.split(text, "\n")
          {files, last} = Enum.split(rest, -1)

          if Regex.match?(~r/\A[0-9a-f]{64}\z/, sum) and files != [] and last == [""] and
               Enum.all?(files, &Files.plain_name?/1),
             do: {:ok, {sum, files}},
             else: damaged(stamp, text)
        end
    end
  end

  # Records that the archive of SHA-256 `sum` put `names` into priv/.
  def write(app_path, sum, names) do
    stamp = path(app_path)

    with :ok <- File.mkdir_p(Path.dirname(stamp)) |> Files.result(Path.dirname(stamp)) do
      Files.write_atomically(stamp, Enum.map_join([sum | names], &[&1, "\n"]), 0o644)
    end
  end

  # HexagonTpu.Mix.Precompiled.forget/1, whose doc this is.
  def forget(app_path) do
    with {:ok, stamp} <- read(app_path) do
      case stamp do
        nil ->
          :ok

        {_sum, files} ->
          for file <- files, do: File.rm(Path.join([app_path, "priv", file]))
          File.rm(path(app_path)) |> Files.result(path(app_path))
      end
    end
  end

  defp damaged(stamp, text) do
    found = if text == "", do: "an empty file", else: inspect(String.slice(text, 0, 80))

    {:error,
     "#{stamp} (the record of a precompiled install) is damaged: expected the archive's " <>
       "SHA-256 and then the names of the files it put into priv/, one per line; found " <>
       "#{found}. Delete it and the priv/ directory next to it, then compile again"}
  end
end
