# Every local link and resource of the generated HTML resolves: `href`/`src` to a file of the
# docs directory, and a `#fragment` to an element with that id in its page (ExDoc warns about
# neither: a module it knows but does not document, or a guide's link to a heading that
# changed). Usage: elixir test/docs/links.exs DOC_DIR [DUMP_DIR]: with DUMP_DIR (the DOM
# Chromium dumped after the pages' scripts ran, where the sidebar's links are, one file per
# page under the page's name) its files are checked as the pages of DOC_DIR they were dumped
# from; without, every .html file of DOC_DIR.
{doc, pages} =
  case System.argv() do
    [doc] -> {doc, Path.wildcard(Path.join(doc, "*.html"))}
    [doc, dump] -> {doc, Path.wildcard(Path.join(dump, "*.html"))}
  end

# What HexDocs serves beside the pages (the versions menu); the pages work without it.
served_by_hexdocs = ["docs_config.js"]

ids = fn file ->
  Regex.scan(~r/\sid="([^"]*)"/, File.read!(file), capture: :all_but_first)
  |> MapSet.new(fn [id] ->
    id |> String.replace("&amp;", "&") |> String.replace("&quot;", "\"")
  end)
end

ids = Map.new(Path.wildcard(Path.join(doc, "*.html")), &{Path.basename(&1), ids.(&1)})

problems =
  for page <- pages,
      [attr, url] <-
        Regex.scan(~r/\s(href|src)="([^"]*)"/, File.read!(page), capture: :all_but_first),
      url = String.replace(url, "&amp;", "&"),
      not String.match?(url, ~r/^[a-z][a-z0-9+.-]*:/i),
      url != "",
      url not in served_by_hexdocs,
      problem =
        (fn ->
           {path, fragment} =
             case String.split(url, "#", parts: 2) do
               [path, fragment] -> {path, URI.decode(fragment)}
               [path] -> {path, nil}
             end

           path = path |> String.split("?") |> hd() |> URI.decode()
           target = if path == "", do: Path.basename(page), else: path

           cond do
             not File.exists?(Path.join(doc, target)) ->
               "#{attr}=\"#{url}\": no file #{target}"

             fragment in [nil, ""] or not String.ends_with?(target, ".html") ->
               nil

             not MapSet.member?(Map.fetch!(ids, target), fragment) ->
               "#{attr}=\"#{url}\": no id \"#{fragment}\" in #{target}"

             true ->
               nil
           end
         end).(),
      problem != nil,
      uniq: true,
      do: "#{Path.basename(page)}: #{problem}"

case problems do
  [] ->
    IO.puts("links: #{length(pages)} pages, every local link resolves")

  _ ->
    IO.puts(:stderr, Enum.join(problems, "\n"))
    IO.puts(:stderr, "links: #{length(problems)} broken local links")
    System.halt(1)
end
