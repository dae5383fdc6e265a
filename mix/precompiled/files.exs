# The plumbing the installer's parts share (mix/precompiled.exs loads this file first): files
# read only when they are regular and of sensible size, written beside their destination and
# renamed into place, names that stay in their directory, SHA-256 of bytes, and OTP's own
# applications put back on the code path before they are used. Calls none of the other parts.
defmodule HexagonTpu.Mix.Precompiled.Files do
  @moduledoc false

  # A file name that stays in its directory: no separator, no leading dot, nothing after a
  # newline (\z, not $). In a function, not a module attribute: OTP 28's compiled regexes
  # cannot be stored in one.
  def plain_name?(name), do: Regex.match?(~r/\A[A-Za-z0-9][A-Za-z0-9._+-]*\z/, name)

  def sha256(bytes) do
    ensure_otp_apps([:crypto])
    Base.encode16(:crypto.hash(:sha256, bytes), case: :lower)
  end

  # Mix 1.15+ prunes the code path to the project's applications before compiling; OTP's own
  # applications used here must be put back first (a no-op on older Mix).
  def ensure_otp_apps(apps) do
    if function_exported?(Mix, :ensure_application!, 1),
      do: Enum.each(apps, &Mix.ensure_application!/1)
  end

  # A file read whole, only when it is a regular file of sensible size: a FIFO, a device or a
  # directory in its place is an error, not a read that blocks.
  def read_regular(path, max_bytes) do
    case File.stat(path) do
      {:ok, %File.Stat{type: :regular, size: size}} when size > max_bytes ->
        {:error, "#{path} is #{size} bytes: expected at most #{max_bytes}"}

      {:ok, %File.Stat{type: :regular}} ->
        File.read(path) |> result(path)

      {:ok, %File.Stat{type: type}} ->
        {:error, "#{path} is #{file_type(type)}: expected a regular file"}

      {:error, reason} ->
        {:error, "#{path}: #{:file.format_error(reason)}"}
    end
  end

  defp file_type(:directory), do: "a directory"
  defp file_type(:device), do: "a device"
  defp file_type(_), do: "a FIFO, socket or other special file"

  # A File function's result with its error as a message naming the path.
  def result(:ok, _path), do: :ok
  def result({:ok, value}, _path), do: {:ok, value}
  def result({:error, reason}, path), do: {:error, "#{path}: #{:file.format_error(reason)}"}

  # Written beside and renamed into place: a full disk or a crash leaves the old file or none,
  # never a truncated one.
  def write_atomically(path, bytes, mode) do
    tmp = path <> ".tmp"

    with :ok <- File.write(tmp, bytes) |> result(tmp),
         :ok <- File.chmod(tmp, mode) |> result(tmp),
         :ok <- File.rename(tmp, path) |> result(path) do
      :ok
    else
      error ->
        File.rm(tmp)
        error
    end
  end
end
