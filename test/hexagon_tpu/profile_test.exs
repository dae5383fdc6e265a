defmodule HexagonTpu.ProfileTest do
  # async: false: the live-handle and profile counters are process-wide.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, Profile}

  # models/chain100: 100 named ops (add_00, relu_00, ..., relu_49) over u8 [1,1024]
  setup_all do
    path = build_file!(File.read!("models/chain100/chain100.txt"), "chain100")
    {:ok, model} = HexagonTpu.load_model(path, backend: :reference)
    input = for i <- 0..1023, into: <<>>, do: <<rem(i * 7, 50) / 10 - 2.5::float-32-native>>
    %{path: path, model: model, input: input}
  end

  defp names,
    do: for(i <- 0..49, k <- ["add", "relu"], do: "#{k}_#{String.pad_leading("#{i}", 2, "0")}")

  test "profile/3 at the detailed level: every op, heaviest first", %{model: m, input: x} do
    before = HexagonTpu.stats()
    assert {:ok, %Profile{} = p} = HexagonTpu.profile(m, [x], runs: 3)
    assert p.graph == "chain100" and p.level == :detailed and p.runs == 3
    assert length(p.ops) == 100
    assert Enum.sort(Enum.map(p.ops, & &1.name)) == Enum.sort(names())
    assert Enum.sort_by(p.ops, & &1.index) |> Enum.map(& &1.name) == names()
    weights = Enum.map(p.ops, & &1.cycles)
    assert weights == Enum.sort(weights, :desc)
    assert Enum.all?(p.ops, &(&1.cycles > 0 and &1.min_cycles <= &1.cycles))
    assert_in_delta Enum.sum(Enum.map(p.ops, & &1.share)), 100.0, 0.01
    assert p.accel_cycles >= Enum.sum(Enum.map(p.ops, & &1.min_cycles))
    assert p.host.execute_ns > 0 and p.host.total_ns >= p.host.execute_ns
    assert p.note == "" and p.extended and p.dropped_events == 0
    assert [%{name: "execute", type: 400, unit: :us, children: kids}] = p.events
    assert %{name: "accelerator time", children: nodes} = Enum.find(kids, &(&1.type == 3004))
    assert length(nodes) == 100 and hd(nodes).identifier == "add_00"
    after_ = HexagonTpu.stats()
    assert after_.profiled_calls == before.profiled_calls + 3
    assert after_.live_profiles == 0
  end

  test "the basic level: the accelerator's figures, no ops", %{model: m, input: x} do
    p = HexagonTpu.profile!(m, [x], level: :basic, runs: 1)
    assert p.ops == [] and p.total_events == 6
    assert Enum.map(hd(p.events).children, & &1.name) |> Enum.member?("host RPC")
  end

  test "optrace on a binary without optrace data: detailed events and a note", %{
    model: m,
    input: x
  } do
    p = HexagonTpu.profile!(m, [x], level: :optrace, runs: 1)
    assert p.level == :optrace and length(p.ops) == 100
    assert p.note =~ "no optrace data: the binary was not built with optrace"
  end

  test "an event of unit object carries the backend's opaque object", %{path: path, input: x} do
    # the reference backend adds one to its execute profiles (HTPU_REF_PROFILE_OBJECT, read
    # when its backend is created)
    rt = HexagonTpu.Runtime.open!(backend: :reference, env: [{"HTPU_REF_PROFILE_OBJECT", "blob"}])
    m = HexagonTpu.load_model!(path, runtime: rt)
    p = HexagonTpu.profile!(m, [x], runs: 1)
    assert [%{children: kids}] = p.events
    obj = Enum.find(kids, &(&1.unit == :object))
    assert %{type: 0xF001, value: %{data: "blob", file: "htpu-reference-object.bin"}} = obj
    assert p.note == ""
    HexagonTpu.close(m)
    HexagonTpu.Runtime.close(rt)
  end

  test "an event cap truncates and says so", %{model: m, input: x} do
    p = HexagonTpu.profile!(m, [x], runs: 1, max_events: 40)
    assert p.total_events == 40
    assert p.note =~ "truncated at 40 events"
    assert p.note =~ "per-op figures partial"
    # the ops read are the first ones: no share of them is given
    assert p.ops != [] and Enum.all?(p.ops, &is_nil(&1.share))
  end

  test "the trace and the page", %{model: m, input: x} do
    p = HexagonTpu.profile!(m, [x], runs: 2)
    dir = tmp_dir!()
    trace = Path.join(dir, "p#{System.unique_integer([:positive])}.json")
    page = Path.join(dir, "p#{System.unique_integer([:positive])}.html")
    assert :ok = Profile.write_trace(p, trace)
    t = File.read!(trace)
    assert length(String.split(t, ~s("cat":"op"))) == 101
    assert t =~ ~s("name":"relu_49")
    assert :ok = Profile.write_page(p, page, "chain <100>")
    h = File.read!(page)
    assert length(String.split(h, ~s(<rect class="bar"))) == 101
    assert h =~ "chain &lt;100&gt;"
    refute h =~ "http://" or h =~ "https://"
    # a file that cannot be written, a struct that is no profile
    assert {:error, %Error{reason: :io, message: msg}} =
             Profile.write_trace(p, "/nonexistent-dir/t.json")

    assert msg =~ "cannot write '/nonexistent-dir/t.json'"
    assert {:error, %Error{reason: :io}} = Profile.write_page(p, "/nonexistent-dir/p.html")
    assert {:error, %Error{reason: :invalid_argument}} = Profile.write_trace(%{}, trace)
    # a struct made by hand, a NUL byte in a path or title: errors, never a raise (before: an
    # ArgumentError out of the NIF)
    for forged <- [%Profile{}, %Profile{events: nil, ref: make_ref()}, %Profile{ref: :x}] do
      assert {:error, %Error{reason: :invalid_argument, message: fm}} =
               Profile.write_trace(forged, trace)

      assert fm =~ "not a profile read by hexagon_tpu"
      assert {:error, %Error{reason: :invalid_argument}} = Profile.write_page(forged, page)
    end

    assert {:error, %Error{reason: :invalid_argument}} =
             Profile.events(%Profile{events: nil, ref: make_ref()})

    assert {:error, %Error{reason: :invalid_argument}} = Profile.events(:foo)
    assert {:ok, [%{name: "execute"}]} = Profile.events(p)

    assert {:error, %Error{reason: :invalid_argument, message: nm}} =
             Profile.write_trace(p, trace <> <<0>> <> "x")

    assert nm =~ "the path holds a NUL byte"

    assert {:error, %Error{reason: :invalid_argument}} = Profile.write_page(p, page, "a" <> <<0>>)

    assert {:error, %Error{reason: :invalid_argument, message: tm}} =
             Profile.write_page(p, page, ~c"a charlist")

    assert tm =~ "expected the title to be a string or nil"

    File.rm(trace)
    File.rm(page)
  end

  test "concurrent writes of one path all succeed", %{model: m, input: x} do
    p = HexagonTpu.profile!(m, [x], runs: 1)
    path = Path.join(tmp_dir!(), "same#{System.unique_integer([:positive])}.json")

    results =
      1..16
      |> Enum.map(fn _ -> Task.async(fn -> Profile.write_trace(p, path) end) end)
      |> Enum.map(&Task.await(&1, 30_000))

    assert Enum.all?(results, &(&1 == :ok)), inspect(Enum.reject(results, &(&1 == :ok)))
    assert File.read!(path) =~ ~s("otherData")
    # no temporary file left beside it
    assert Path.wildcard(Path.join(Path.dirname(path), ".#{Path.basename(path)}*")) == []
    File.rm(path)
  end

  test "many runs: per-op samples kept compactly, a few event trees, not every run's",
       %{model: m, input: x} do
    # Every run's tree kept (about 13 KB of terms each: 5M words at 3000 runs) passes 2M words
    # (16 MB) of heap; the samples of 3000 runs are 3000 binaries of 1.7 KB off the heap.
    prev = :erlang.system_monitor(self(), [{:large_heap, 2_000_000}])

    try do
      task = Task.async(fn -> HexagonTpu.profile(m, [x], runs: 3000) end)
      assert {:ok, %Profile{runs: 3000} = p} = Task.await(task, 120_000)
      assert length(p.ops) == 100 and Enum.all?(p.ops, &(&1.min_cycles <= &1.cycles))
      assert [%{name: "execute"}] = p.events
      pid = task.pid
      refute_received {:monitor, ^pid, :large_heap, _}
    after
      case prev do
        :undefined -> :erlang.system_monitor(:undefined)
        {pid, opts} -> :erlang.system_monitor(pid, opts)
      end
    end
  end

  test "runs x ops past the sample cap: a clear error after the first run" do
    n = div(Profile.max_samples(), 100_000) + 1

    text =
      ["graph wide\n  input x f32 [1,4]\n"] ++
        for(i <- 1..(n - 1), do: "  native t#{i} f32 [1,4]\n") ++
        ["  output y f32 [1,4]\n"] ++
        for i <- 1..n do
          src = if i == 1, do: "x", else: "t#{i - 1}"
          dst = if i == n, do: "y", else: "t#{i}"
          "  op Relu #{src} -> #{dst} name=r#{i}\n"
        end

    {:ok, m} = HexagonTpu.load_model(build_file!(IO.iodata_to_binary(text)), backend: :reference)
    before = HexagonTpu.stats().profiled_calls
    {us, result} = :timer.tc(fn -> HexagonTpu.profile(m, [<<0::size(128)>>], runs: 100_000) end)
    assert {:error, %Error{reason: :invalid_argument, message: msg}} = result
    assert msg =~ "100000 runs of #{n} ops make #{n * 100_000} per-op samples"
    assert msg =~ "past the limit of #{Profile.max_samples()}"
    assert HexagonTpu.stats().profiled_calls == before + 1
    assert us < 30_000_000
    HexagonTpu.close(m)
  end

  test "bad options and a closed model", %{path: path, model: m, input: x} do
    assert {:error, %Error{message: msg}} = HexagonTpu.profile(m, [x], level: :verbose)

    assert msg =~
             "HexagonTpu.profile/3: expected :level to be :basic, :detailed, :linting or :optrace"

    assert {:error, %Error{message: msg}} = HexagonTpu.profile(m, [x], runs: 0)
    assert msg =~ "expected :runs to be an integer from 1 to 100000"
    assert {:error, %Error{}} = HexagonTpu.profile(m, [x], max_events: 2_000_000)
    assert {:error, %Error{message: msg}} = HexagonTpu.profile(:nope, [x])
    assert msg =~ "expected a model"
    {:ok, m2} = HexagonTpu.load_model(path, backend: :reference)
    HexagonTpu.close(m2)
    assert {:error, %Error{reason: :closed}} = HexagonTpu.profile(m2, [x], runs: 1)
    assert HexagonTpu.stats().live_profiles == 0
  end

  test "profile_every: one execute in N carries a profile", %{path: path, input: x} do
    {:ok, m} =
      HexagonTpu.load_model(path, backend: :reference, profile_every: 3, profile_level: :basic)

    before = HexagonTpu.stats().profiled_calls
    plain = HexagonTpu.predict!(m, [x], output: :binary)
    for _ <- 2..7, do: assert(HexagonTpu.predict!(m, [x], output: :binary) == plain)
    # calls 1, 4 and 7
    assert HexagonTpu.stats().profiled_calls == before + 3
    assert HexagonTpu.stats().live_profiles == 0
    HexagonTpu.close(m)
  end

  test "profile_every and profile_level are checked", %{path: path} do
    assert {:error, %Error{message: msg}} =
             HexagonTpu.load_model(path, backend: :reference, profile_every: 0)

    assert msg =~ "expected :profile_every to be a positive integer"

    assert {:error, %Error{message: msg}} =
             HexagonTpu.load_model(path, backend: :reference, profile_level: :all)

    assert msg =~ "expected :profile_level to be :basic, :detailed, :linting or :optrace"
  end
end
