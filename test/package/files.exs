# Prints, one a line, the files `mix hex.build` would put in the package: mix.exs's
# package[:files] expanded as Hex expands them (Mix.Tasks.Hex.Build: each entry through
# Path.wildcard/1 from the project root, a directory taken whole with its dot files, what is
# not a regular file dropped). An entry that matches nothing fails, as it fails `mix hex.build`
# ("Missing files"). Run by test/package/run.sh with `mix run --no-compile --no-start`.
files = Mix.Project.config()[:package][:files] || raise "mix.exs: no package[:files]"
root = File.cwd!()

expand = fn expand, path ->
  if File.dir?(path) and not match?({:ok, %{type: :symlink}}, File.lstat(path)) do
    path |> File.ls!() |> Enum.flat_map(&expand.(expand, Path.join(path, &1)))
  else
    [path]
  end
end

missing = Enum.filter(files, &(Path.wildcard(Path.join(root, &1)) == []))
if missing != [], do: raise("package files that match nothing: #{Enum.join(missing, ", ")}")

files
|> Enum.flat_map(&Path.wildcard(Path.join(root, &1)))
|> Enum.flat_map(&expand.(expand, &1))
|> Enum.filter(&File.regular?/1)
|> Enum.map(&Path.relative_to(&1, root))
|> Enum.uniq()
|> Enum.each(&IO.puts/1)
