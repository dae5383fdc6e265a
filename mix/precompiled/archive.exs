# The archive's files, checked before any is written (mix/precompiled.exs loads this file): a
# whole .tar.gz whose entries are regular files with plain names (they go into priv/), each
# once, hexagon_tpu_nif.so among them, and every ELF file one for the target's architecture.
# Calls Files.
defmodule HexagonTpu.Mix.Precompiled.Archive do
  @moduledoc false

  alias HexagonTpu.Mix.Precompiled.Files

  # {:ok, [{name, bytes}]} of the archive `bytes` (from `where`, for messages) for `target`
  # ({target, {ELF e_machine, its name}}), or {:error, message}.
  def files(where, bytes, target) do
    with {:ok, tar} <- gunzip(where, bytes),
         {:ok, files} <- tar_files(where, tar),
         :ok <- check_elf(where, files, target) do
      {:ok, files}
    end
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
    odd = Enum.reject(names, &Files.plain_name?/1)
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
    expected = "a 64-bit little-endian ELF for #{label} (machine #{machine}, target #{target})"

    Enum.reduce_while(files, :ok, fn {n, bytes}, :ok ->
      case elf_problem(n, bytes, machine) do
        nil -> {:cont, :ok}
        problem -> {:halt, {:error, "#{where}: #{n} is #{problem}: expected #{expected}"}}
      end
    end)
  end

  # What is wrong with the file `n` for a target of ELF e_machine `machine`, or nil.
  defp elf_problem(n, bytes, machine) do
    case bytes do
      <<0x7F, "ELF", _::binary>> when byte_size(bytes) < 64 ->
        "a truncated ELF file (#{byte_size(bytes)} bytes)"

      <<0x7F, "ELF", 2, 1, _::binary-size(10), type::little-16, ^machine::little-16, _::binary>> ->
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
  end
end
