defmodule HexagonTpu.Mix.PrecompiledTest do
  # The precompiled NIF installer (mix/precompiled.exs, loaded by mix.exs), called as
  # `mix compile` calls it but with directories of its own: synthetic archives (ELF headers
  # only, nothing is loaded), a project directory for the trusted checksum.exs, a cache. The
  # download tests use HTTPS and plain-HTTP servers on 127.0.0.1 in this VM, with a test CA
  # loaded as the system's CA certificates (:public_key.cacerts_load/1): nothing leaves the host.
  # Not async: Mix.shell/1 and the CA certificates are global to the VM.
  use ExUnit.Case, async: false

  # OTP applications this test starts itself: Mix 1.15+ leaves them out of the code path the
  # test files are compiled with.
  @compile {:no_warn_undefined, [:ssl, :public_key]}

  alias HexagonTpu.Mix.Precompiled

  @version "0.1.0"
  @target "x86_64-linux-gnu"
  @nif "2.16"
  @name "hexagon_tpu-nif-#{@nif}-#{@target}-#{@version}.tar.gz"
  @x86_64 62
  @aarch64 183

  setup do
    dir = Path.join(System.tmp_dir!(), "htpu-precompiled-#{System.unique_integer([:positive])}")
    File.rm_rf!(dir)
    for d <- ["release", "project", "cache", "app"], do: File.mkdir_p!(Path.join(dir, d))
    shell = Mix.shell()
    Mix.shell(Mix.Shell.Process)

    on_exit(fn ->
      Mix.shell(shell)
      File.rm_rf!(dir)
    end)

    %{
      dir: dir,
      release: Path.join(dir, "release"),
      project: Path.join(dir, "project"),
      app: Path.join(dir, "app"),
      opts: [
        version: @version,
        target: @target,
        nif_version: @nif,
        project_dir: Path.join(dir, "project"),
        cache_dir: Path.join(dir, "cache")
      ]
    }
  end

  # ---- synthetic archives ------------------------------------------------------------------------

  # The first 64 bytes of a 64-bit little-endian ELF (e_type 3: a shared object), then a tag
  # that makes each file's bytes its own.
  defp elf(machine, tag, opts \\ []) do
    class = Keyword.get(opts, :class, 2)
    type = Keyword.get(opts, :type, 3)

    <<0x7F, "ELF", class, 1, 1, 0, 0::64, type::little-16, machine::little-16, 1::little-32,
      0::size(40)-unit(8), tag::binary>>
  end

  defp good_files(machine \\ @x86_64) do
    [
      {"hexagon_tpu_nif.so", elf(machine, "nif")},
      {"libhtpu_refbackend.so", elf(machine, "backend")},
      {"htpu-refbuild", elf(machine, "refbuild", type: 3)}
    ]
  end

  defp tar_gz(files) do
    path = Path.join(System.tmp_dir!(), "htpu-tar-#{System.unique_integer([:positive])}")
    :ok = :erl_tar.create(String.to_charlist(path), tar_entries(files), [:compressed])
    bytes = File.read!(path)
    File.rm!(path)
    bytes
  end

  defp tar_entries(files), do: for({n, b} <- files, do: {String.to_charlist(n), b})

  defp sha256(bytes), do: Base.encode16(:crypto.hash(:sha256, bytes), case: :lower)

  defp checksum_exs(entries) do
    lines = for {n, bytes} <- entries, do: ~s(  "#{n}" => "sha256:#{sha256(bytes)}",\n)
    IO.iodata_to_binary(["%{\n", lines, "}\n"])
  end

  # An archive and its checksum.exs in `dir`, as `make precompiled` leaves them.
  defp release(dir, archive_bytes) do
    File.write!(Path.join(dir, @name), archive_bytes)
    File.write!(Path.join(dir, "checksum.exs"), checksum_exs([{@name, archive_bytes}]))
    archive_bytes
  end

  defp priv(app), do: Path.join(app, "priv")
  defp stamp(app), do: Path.join([app, "native", "precompiled"])
  defp installed(app), do: File.ls!(priv(app)) |> Enum.sort()

  defp install(source, ctx), do: Precompiled.install(source, ctx.app, ctx.opts)

  defp refute_installed(app) do
    refute File.exists?(Path.join(priv(app), "hexagon_tpu_nif.so"))
    refute File.exists?(stamp(app))
  end

  # ---- a local directory or file -----------------------------------------------------------------

  test "the archive and checksum.exs that make precompiled writes install", ctx do
    release(ctx.release, tar_gz(good_files()))
    assert :ok = install(ctx.release, ctx)
    assert installed(ctx.app) == ["hexagon_tpu_nif.so", "htpu-refbuild", "libhtpu_refbackend.so"]
    assert File.read!(Path.join(priv(ctx.app), "hexagon_tpu_nif.so")) == elf(@x86_64, "nif")
    assert_received {:mix_shell, :info, ["hexagon_tpu: precompiled " <> _]}

    # the same archive again: nothing to do
    assert :ok = install(Path.join(ctx.release, @name), ctx)
    refute_received {:mix_shell, :info, ["hexagon_tpu: precompiled " <> _]}
  end

  test "a file given by path must be the archive for this target and VM", ctx do
    bytes = tar_gz(good_files())
    other = Path.join(ctx.release, "hexagon_tpu-nif-#{@nif}-aarch64-linux-gnu-#{@version}.tar.gz")
    File.write!(other, bytes)
    File.write!(Path.join(ctx.release, "checksum.exs"), checksum_exs([{@name, bytes}]))

    assert {:error, message} = install(other, ctx)
    assert message =~ "#{other} is not the archive for this target and VM: expected #{@name}"
    refute_installed(ctx.app)
  end

  # ---- checksum.exs is data ----------------------------------------------------------------------

  test "code in checksum.exs is never run", ctx do
    bytes = tar_gz(good_files())
    File.write!(Path.join(ctx.release, @name), bytes)
    marker = Path.join(ctx.dir, "ran")

    File.write!(Path.join(ctx.release, "checksum.exs"), """
    File.write!(#{inspect(marker)}, "checksum.exs was evaluated")
    #{checksum_exs([{@name, bytes}])}
    """)

    assert {:error, message} = install(ctx.release, ctx)
    refute File.exists?(marker)
    assert message =~ "#{ctx.release}/checksum.exs: expected one map of string literals"
    assert message =~ "nothing in it is run"
    refute_installed(ctx.app)
  end

  test "only string literals count in checksum.exs", ctx do
    bytes = tar_gz(good_files())
    File.write!(Path.join(ctx.release, @name), bytes)
    sum = sha256(bytes)

    for text <- [
          ~s|%{"#{@name}" => "sha256:" <> "#{sum}"}|,
          ~s|%{"#{@name}" => "sha256:\#{"#{sum}"}"}|,
          ~s|%{"#{@name}" => System.get_env("SUM")}|,
          ~s|[{"#{@name}", "sha256:#{sum}"}]|,
          ~s|sum = "sha256:#{sum}"\n%{"#{@name}" => sum}|
        ] do
      File.write!(Path.join(ctx.release, "checksum.exs"), text)
      assert {:error, message} = install(ctx.release, ctx)
      assert message =~ "checksum.exs: expected one map of string literals", text
    end

    refute_installed(ctx.app)
  end

  test "a syntax error in checksum.exs names the file and line", ctx do
    bytes = tar_gz(good_files())
    File.write!(Path.join(ctx.release, @name), bytes)
    sums = Path.join(ctx.release, "checksum.exs")
    File.write!(sums, ~s(%{\n  "#{@name}" => "sha256:#{sha256(bytes)}",\n))

    assert {:error, message} = install(ctx.release, ctx)
    # the line of the error (3 on Elixir 1.14; 1.18 names the line of the unclosed `%{`)
    assert message =~ ~r/#{Regex.escape(sums)}:[13]: not valid Elixir \(missing terminator/
    assert message =~ ~s(expected %{"<archive>" => "sha256:<64 hex digits>", ...})
  end

  test "an archive listed twice in checksum.exs is refused", ctx do
    bytes = release(ctx.release, tar_gz(good_files()))
    sums = Path.join(ctx.release, "checksum.exs")
    other = String.duplicate("0", 64)

    File.write!(sums, """
    %{
      "#{@name}" => "sha256:#{other}",
      "#{@name}" => "sha256:#{sha256(bytes)}",
    }
    """)

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "#{sums}: #{@name} is listed twice"
    refute_installed(ctx.app)
  end

  test "a checksum that is not sha256:<64 hex digits> is refused", ctx do
    release(ctx.release, tar_gz(good_files()))
    sums = Path.join(ctx.release, "checksum.exs")
    File.write!(sums, ~s(%{"#{@name}" => "sha256:abc"}))

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ ~s(#{sums}: the checksum of #{@name} is "sha256:abc")
  end

  test "a FIFO as checksum.exs is refused, not read", ctx do
    File.write!(Path.join(ctx.release, @name), tar_gz(good_files()))
    sums = Path.join(ctx.release, "checksum.exs")
    {_, 0} = System.cmd("mkfifo", [sums])

    # A read of the FIFO would wait for a writer for ever, and hold the VM's file server (every
    # other file operation) while it waits: bounded here, and released by a writer that does not
    # go through the file server (a raw open) if it happened.
    task = Task.async(fn -> install(ctx.release, ctx) end)

    result =
      case Task.yield(task, 60_000) do
        {:ok, result} ->
          result

        nil ->
          {:ok, writer} = File.open(sums, [:write, :raw])
          File.close(writer)
          Task.shutdown(task, :brutal_kill)
          :blocked_reading_the_fifo
      end

    assert {:error, message} = result
    assert message =~ "#{sums} is a FIFO, socket or other special file: expected a regular file"
  end

  # ---- over the network: only the project's checksum.exs vouches --------------------------------

  test "download: the release under the project's :source_url, which must be https://" do
    assert Precompiled.release_url(source_url: "https://github.com/o/hexagon_tpu/") ==
             {:url, "https://github.com/o/hexagon_tpu/releases/download/v@{version}"}

    assert {:url, "https://" <> _} = Precompiled.release_url(Mix.Project.config())
    assert {:error, message} = Precompiled.release_url(source_url: "http://example.com/x")
    assert message =~ "download: the project's :source_url is not an https:// URL"
    assert {:error, _} = Precompiled.release_url([])
  end

  describe "download" do
    setup ctx do
      for app <- [:crypto, :asn1, :public_key, :ssl, :inets] do
        # Mix 1.15+ prunes OTP's applications from the code path (apply: 1.14 has no such call)
        if function_exported?(Mix, :ensure_application!, 1),
          do: apply(Mix, :ensure_application!, [app])
      end

      {:ok, _} = Application.ensure_all_started(:ssl)
      {:ok, _} = Application.ensure_all_started(:inets)
      ca = Path.join(ctx.dir, "ca.pem")
      server_config = test_tls_config(ca)
      :ok = :public_key.cacerts_load(String.to_charlist(ca))
      on_exit(fn -> :public_key.cacerts_clear() end)
      %{server_config: server_config}
    end

    test "http:// is refused before connecting", ctx do
      bytes = tar_gz(good_files())
      File.write!(Path.join(ctx.project, "checksum.exs"), checksum_exs([{@name, bytes}]))
      port = serve(:plain, nil, %{"/rel/#{@name}" => {200, [], bytes}})

      assert {:error, message} = install("http://127.0.0.1:#{port}/rel", ctx)
      assert message =~ "http:// is refused"
      refute_received {:request, :plain, _}
      refute_received {:mix_shell, :info, ["hexagon_tpu: downloading" <> _]}
      refute_installed(ctx.app)
    end

    test "a checksum.exs beside the archive never vouches for it", ctx do
      # a release whose archive and checksum.exs were both replaced: the project has none
      forged = tar_gz(good_files())

      routes = %{
        "/rel/#{@name}" => {200, [], forged},
        "/rel/checksum.exs" => {200, [], checksum_exs([{@name, forged}])}
      }

      port = serve(:tls, ctx.server_config, routes)

      assert {:error, message} = install("https://localhost:#{port}/rel", ctx)
      assert message =~ "#{ctx.project}/checksum.exs does not exist"
      assert message =~ "a checksum.exs fetched from the same place could have been replaced"
      refute_received {:request, :tls, _}
      refute_installed(ctx.app)
    end

    test "the project's checksum.exs vouches; the verified archive is cached", ctx do
      bytes = tar_gz(good_files())
      File.write!(Path.join(ctx.project, "checksum.exs"), checksum_exs([{@name, bytes}]))
      port = serve(:tls, ctx.server_config, %{"/v#{@version}/#{@name}" => {200, [], bytes}})

      assert :ok = install("https://localhost:#{port}/v@{version}", ctx)
      assert_received {:request, :tls, "/v0.1.0/" <> @name}
      assert File.read!(Path.join(ctx.opts[:cache_dir], @name)) == bytes

      assert installed(ctx.app) == [
               "hexagon_tpu_nif.so",
               "htpu-refbuild",
               "libhtpu_refbackend.so"
             ]

      # from the cache the next time (nothing listens on port 1)
      File.rm_rf!(ctx.app)
      assert :ok = install("https://localhost:1/v@{version}", ctx)

      assert installed(ctx.app) == [
               "hexagon_tpu_nif.so",
               "htpu-refbuild",
               "libhtpu_refbackend.so"
             ]
    end

    test "a downloaded archive that does not match is neither installed nor cached", ctx do
      good = tar_gz(good_files())
      File.write!(Path.join(ctx.project, "checksum.exs"), checksum_exs([{@name, good}]))
      forged = tar_gz(good_files() ++ [{"libextra.so", elf(@x86_64, "extra")}])
      port = serve(:tls, ctx.server_config, %{"/rel/#{@name}" => {200, [], forged}})

      assert {:error, message} = install("https://localhost:#{port}/rel", ctx)
      assert message =~ "does not match checksum.exs (#{ctx.project}/checksum.exs"
      refute File.exists?(Path.join(ctx.opts[:cache_dir], @name))
      refute_installed(ctx.app)
    end

    test "redirects are followed to https:// only", ctx do
      bytes = tar_gz(good_files())
      File.write!(Path.join(ctx.project, "checksum.exs"), checksum_exs([{@name, bytes}]))
      plain = serve(:plain, nil, %{"/clear/#{@name}" => {200, [], bytes}})

      tls =
        serve(:tls, ctx.server_config, %{
          "/rel/#{@name}" => {302, [{"location", "/assets/#{@name}"}], ""},
          "/assets/#{@name}" => {200, [], bytes},
          "/down/#{@name}" =>
            {302, [{"location", "http://127.0.0.1:#{plain}/clear/#{@name}"}], ""}
        })

      assert {:error, message} = install("https://localhost:#{tls}/down", ctx)
      assert message =~ "redirects to http://127.0.0.1:#{plain}/clear/#{@name}: refused"
      refute_received {:request, :plain, _}
      refute_installed(ctx.app)

      assert :ok = install("https://localhost:#{tls}/rel", ctx)
      assert_received {:request, :tls, "/assets/" <> @name}

      assert installed(ctx.app) == [
               "hexagon_tpu_nif.so",
               "htpu-refbuild",
               "libhtpu_refbackend.so"
             ]
    end
  end

  # ---- the stamp (native/precompiled) ------------------------------------------------------------

  test "a damaged stamp is an error that names it, for the source build too", ctx do
    release(ctx.release, tar_gz(good_files()))
    stamp = stamp(ctx.app)
    File.mkdir_p!(Path.dirname(stamp))

    for text <- [
          "",
          "\n",
          "not a checksum\nhexagon_tpu_nif.so\n",
          "#{String.duplicate("a", 64)}\n"
        ] do
      File.write!(stamp, text)
      assert {:error, message} = Precompiled.forget(ctx.app)
      assert message =~ "#{stamp} (the record of a precompiled install) is damaged"
      assert message =~ "expected the archive's SHA-256 and then the names of the files"

      assert {:error, ^message} = Precompiled.forget(ctx.app)
      assert {:error, install_message} = install(ctx.release, ctx)
      assert install_message =~ message
    end

    File.write!(stamp, "")
    assert {:error, message} = Precompiled.forget(ctx.app)
    assert message =~ "found an empty file"
  end

  test "forget removes what the archive installed", ctx do
    release(ctx.release, tar_gz(good_files()))
    assert :ok = install(ctx.release, ctx)
    File.write!(Path.join(priv(ctx.app), "kept"), "not from the archive")

    assert :ok = Precompiled.forget(ctx.app)
    assert installed(ctx.app) == ["kept"]
    refute File.exists?(stamp(ctx.app))
    assert :ok = Precompiled.forget(ctx.app)
  end

  # ---- what is in the archive --------------------------------------------------------------------

  test "an archive with a file twice is refused", ctx do
    files = good_files() ++ [{"hexagon_tpu_nif.so", elf(@x86_64, "second")}]
    release(ctx.release, tar_gz(files))

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "hexagon_tpu_nif.so more than once: expected each file once"
    refute_installed(ctx.app)
  end

  test "a truncated archive says so", ctx do
    whole = tar_gz(good_files())
    release(ctx.release, binary_part(whole, 0, div(byte_size(whole), 2)))

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "the gzip stream is truncated or corrupt: expected a whole .tar.gz"
    refute_installed(ctx.app)
  end

  test "a tar cut short inside a whole gzip stream says so", ctx do
    tar = :zlib.gunzip(tar_gz(good_files()))
    release(ctx.release, :zlib.gzip(binary_part(tar, 0, 700)))

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "the tar archive inside ends early"
    refute_installed(ctx.app)
  end

  test "an archive that is not gzip says so", ctx do
    tar = :zlib.gunzip(tar_gz(good_files()))
    archive = Path.join(ctx.release, @name)
    release(ctx.release, tar)

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "#{archive} is not gzip-compressed: expected a .tar.gz"
    refute_installed(ctx.app)
  end

  test "a shared object for another architecture is refused before it is installed", ctx do
    release(ctx.release, tar_gz(good_files(@aarch64)))

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "hexagon_tpu_nif.so is an ELF for machine #{@aarch64}"
    assert message =~ "expected a 64-bit little-endian ELF for x86-64 (machine 62"
    refute_installed(ctx.app)

    # the same archive is right for an aarch64 target
    aarch64 = "hexagon_tpu-nif-#{@nif}-aarch64-linux-gnu-#{@version}.tar.gz"
    File.rename!(Path.join(ctx.release, @name), Path.join(ctx.release, aarch64))
    bytes = File.read!(Path.join(ctx.release, aarch64))
    File.write!(Path.join(ctx.release, "checksum.exs"), checksum_exs([{aarch64, bytes}]))
    opts = Keyword.put(ctx.opts, :target, "aarch64-linux-gnu")
    assert :ok = Precompiled.install(ctx.release, ctx.app, opts)
  end

  test "a .so that is not a 64-bit shared object is refused", ctx do
    cases = [
      {"libhtpu_refbackend.so", "not an ELF\n", "not an ELF file"},
      {"libhtpu_refbackend.so", elf(@x86_64, "", class: 1), "a 32-bit ELF"},
      {"libhtpu_refbackend.so", elf(@x86_64, "", type: 2),
       "an ELF of type 2, not a shared object (ET_DYN)"},
      {"htpu-refbuild", binary_part(elf(@x86_64, ""), 0, 20), "a truncated ELF file (20 bytes)"}
    ]

    for {file, bytes, expected} <- cases do
      files = List.keystore(good_files(), file, 0, {file, bytes})
      release(ctx.release, tar_gz(files))
      assert {:error, message} = install(ctx.release, ctx)
      assert message =~ "#{file} is #{expected}: expected a 64-bit little-endian ELF for x86-64"
      refute_installed(ctx.app)
    end
  end

  test "only regular files with plain names are taken from an archive", ctx do
    for entries <- [
          [{"hexagon_tpu_nif.so\n", elf(@x86_64, "nl")}],
          [{"../hexagon_tpu_nif.so", elf(@x86_64, "up")}],
          [{"priv/extra.so", elf(@x86_64, "dir")}]
        ] do
      release(ctx.release, tar_gz(good_files() ++ entries))
      assert {:error, message} = install(ctx.release, ctx)
      assert message =~ "unexpected entries"
      refute_installed(ctx.app)
    end

    # a symbolic link (which an extraction to memory would silently leave out)
    src = Path.join(ctx.dir, "src")
    File.mkdir_p!(src)
    for {n, bytes} <- good_files(), do: File.write!(Path.join(src, n), bytes)
    File.ln_s!("hexagon_tpu_nif.so", Path.join(src, "libhtpu_refsystem.so"))
    tgz = Path.join(ctx.dir, "links.tar.gz")
    names = File.ls!(src) |> Enum.sort()
    {_, 0} = System.cmd("tar", ["-czf", tgz, "-C", src | names])
    release(ctx.release, File.read!(tgz))

    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "libhtpu_refsystem.so (symlink): expected only regular files"
    refute_installed(ctx.app)
  end

  test "an archive without the NIF is refused", ctx do
    release(ctx.release, tar_gz(tl(good_files())))
    assert {:error, message} = install(ctx.release, ctx)
    assert message =~ "has no hexagon_tpu_nif.so"
  end

  test "a target without precompiled archives is named", ctx do
    opts = Keyword.put(ctx.opts, :target, "riscv64-linux-gnu")
    assert {:error, message} = Precompiled.install(ctx.release, ctx.app, opts)
    assert message =~ "no precompiled NIF for target riscv64-linux-gnu"
  end

  # ---- servers on 127.0.0.1 ----------------------------------------------------------------------

  # A CA and a server certificate for "localhost" (the CA written to `ca_file` for
  # :public_key.cacerts_load/1); returns the server's :ssl options.
  defp test_tls_config(ca_file) do
    ec = {:namedCurve, :secp256r1}
    san = {:Extension, {2, 5, 29, 17}, false, [{:dNSName, ~c"localhost"}]}

    %{server_config: server} =
      :public_key.pkix_test_data(%{
        server_chain: %{
          root: [key: ec, digest: :sha256],
          intermediates: [],
          peer: [key: ec, digest: :sha256, extensions: [san]]
        },
        client_chain: %{root: [key: ec], intermediates: [], peer: [key: ec]}
      })

    pem = for der <- server[:cacerts], do: {:Certificate, der, :not_encrypted}
    File.write!(ca_file, :public_key.pem_encode(pem))
    server
  end

  # Serves `routes` (path => {status, headers, body}) on 127.0.0.1 until the test ends, over
  # TLS or plain TCP; sends {:request, kind, path} to the test for each request. Returns the port.
  defp serve(kind, tls_config, routes) do
    test = self()
    opts = [:binary, active: false, reuseaddr: true, ip: {127, 0, 0, 1}]

    {:ok, listen} =
      case kind do
        :tls -> :ssl.listen(0, opts ++ tls_config)
        :plain -> :gen_tcp.listen(0, opts)
      end

    {:ok, {_, port}} = if kind == :tls, do: :ssl.sockname(listen), else: :inet.sockname(listen)

    server = spawn_link(fn -> accept_loop(kind, listen, routes, test) end)

    on_exit(fn ->
      Process.unlink(server)
      Process.exit(server, :kill)
    end)

    port
  end

  defp accept_loop(kind, listen, routes, test) do
    conn =
      case kind do
        :tls ->
          {:ok, socket} = :ssl.transport_accept(listen)

          case :ssl.handshake(socket, 10_000) do
            {:ok, socket} -> {:ssl, socket}
            {:error, _} -> nil
          end

        :plain ->
          {:ok, socket} = :gen_tcp.accept(listen)
          {:gen_tcp, socket}
      end

    if conn, do: answer(kind, conn, routes, test)
    accept_loop(kind, listen, routes, test)
  end

  defp answer(kind, {mod, socket}, routes, test) do
    with {:ok, head} <- read_head(mod, socket, "") do
      [_method, path | _] = String.split(head, " ", parts: 3)
      send(test, {:request, kind, path})
      {status, headers, body} = Map.get(routes, path, {404, [], ""})

      header_lines =
        for {k, v} <- [{"content-length", byte_size(body)}, {"connection", "close"} | headers],
            do: "#{k}: #{v}\r\n"

      mod.send(socket, ["HTTP/1.1 #{status} X\r\n", header_lines, "\r\n", body])
    end

    mod.close(socket)
  end

  defp read_head(mod, socket, acc) do
    if String.contains?(acc, "\r\n\r\n") do
      {:ok, acc}
    else
      with {:ok, data} <- mod.recv(socket, 0, 10_000), do: read_head(mod, socket, acc <> data)
    end
  end
end
