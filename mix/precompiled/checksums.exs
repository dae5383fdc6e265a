# checksum.exs, read as data (mix/precompiled.exs loads this file): the file format elixir_make
# writes and mk/precompiled.mk copies, an Elixir map literal of archive names to
# "sha256:<hex>". It is parsed, never evaluated: anything but string literals in one map (a
# call, an interpolation, a variable, a second expression) is refused. Calls Files.
defmodule HexagonTpu.Mix.Precompiled.Checksums do
  @moduledoc false

  alias HexagonTpu.Mix.Precompiled.Files

  # Far above what the file holds (one line per archive), so that a wrong path cannot make the
  # compile read a huge file into memory.
  @max_checksum_bytes 1_048_576
  @checksum_format ~s(%{"<archive>" => "sha256:<64 hex digits>", ...})

  # {:ok, %{archive name => lowercase hex}} or {:error, message naming the file}.
  def read(path) do
    with {:ok, text} <- Files.read_regular(path, @max_checksum_bytes),
         {:ok, ast} <- parse(path, text),
         {:ok, pairs} <- pairs(path, ast) do
      to_map(path, pairs)
    end
  end

  # The checksum `sums` (the file `checksums` came from) lists for the archive `name`.
  def expected(checksums, name, sums) do
    case Map.fetch(checksums, name) do
      {:ok, hex} -> {:ok, hex}
      :error -> {:error, "#{name} is not in #{sums}"}
    end
  end

  # `bytes` (from `where`) against the checksum `sums` lists for them.
  def verify(bytes, expected, where, sums) do
    case Files.sha256(bytes) do
      ^expected ->
        :ok

      actual ->
        {:error,
         "#{where}: SHA-256 #{actual} does not match checksum.exs (#{sums}: sha256:#{expected})"}
    end
  end

  defp parse(path, text) do
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

  defp pairs(path, {:%{}, _meta, pairs} = ast) when is_list(pairs) do
    if Enum.all?(pairs, &match?({k, v} when is_binary(k) and is_binary(v), &1)),
      do: {:ok, pairs},
      else: not_literal(path, ast)
  end

  defp pairs(path, ast), do: not_literal(path, ast)

  defp not_literal(path, ast) do
    found = ast |> Macro.to_string() |> String.replace(~r/\s+/, " ")
    found = if String.length(found) > 80, do: String.slice(found, 0, 77) <> "...", else: found

    {:error,
     "#{path}: expected one map of string literals, #{@checksum_format} " <>
       "(the file is read as data, nothing in it is run), found: #{found}"}
  end

  defp to_map(path, pairs) when is_list(pairs) do
    Enum.reduce_while(pairs, {:ok, %{}}, fn {name, value}, {:ok, acc} ->
      cond do
        not Files.plain_name?(name) ->
          {:halt, {:error, "#{path}: #{inspect(name)} is not an archive file name"}}

        Map.has_key?(acc, name) ->
          {:halt, {:error, "#{path}: #{name} is listed twice: expected one checksum per archive"}}

        true ->
          case value do
            "sha256:" <> hex ->
              if Regex.match?(~r/\A[0-9a-fA-F]{64}\z/, hex),
                do: {:cont, {:ok, Map.put(acc, name, String.downcase(hex))}},
                else: {:halt, bad_value(path, name, value)}

            _ ->
              {:halt, bad_value(path, name, value)}
          end
      end
    end)
  end

  defp bad_value(path, name, value) do
    {:error,
     "#{path}: the checksum of #{name} is #{inspect(value)}: expected \"sha256:<64 hex digits>\""}
  end
end
