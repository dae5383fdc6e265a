# bench/waits_bench.exs - the rows of "a deadline holds at every wait, and many callers wait"
# on the reference backend. Run by `make bench` after the C table, as
#   mix run bench/waits_bench.exs
# Prints one line per row: what, the figure, the goal. Waits are on events (the gate held, an
# execute in flight); the figures are wall times and counts, machine-dependent.
alias HexagonTpu.{Context, NIF, Runtime}

two = """
graph add_f32
  input a f32 [1,4]
  input b f32 [1,4]
  output y f32 [1,4]
  op ElementWiseAdd a b -> y
graph mul_f32
  input a f32 [1,4]
  input b f32 [1,4]
  output y f32 [1,4]
  op ElementWiseMultiply a b -> y
"""

dir = Path.join(System.tmp_dir!(), "htpu_waits_bench_#{System.unique_integer([:positive])}")
File.mkdir_p!(dir)
src = Path.join(dir, "two.txt")
File.write!(src, two)
bin_path = Path.join(dir, "two.bin")
{_, 0} = System.cmd(Path.join(:code.priv_dir(:hexagon_tpu), "htpu-refbuild"), [src, bin_path])
bin = File.read!(bin_path)
f32 = fn l -> for x <- l, into: <<>>, do: <<x * 1.0::float-32-native>> end
{:ok, shared} = Runtime.shared(backend: :reference)
lib = Runtime.info(shared).backend_lib
latency = fn api, usec -> :ok = NIF.ref_control(lib, {:set_latency, api, usec}) end
graph_latency = fn g, usec -> :ok = NIF.ref_control(lib, {:set_graph_latency, g, usec}) end

row = fn what, value, goal ->
  IO.puts(String.pad_trailing(what, 78) <> " #{value}   (goal #{goal})")
end

wait_until = fn f ->
  Enum.reduce_while(1..10_000, nil, fn _, _ ->
    if f.(), do: {:halt, :ok}, else: Process.sleep(1) && {:cont, nil}
  end)
end

ms = fn t0 -> System.monotonic_time(:millisecond) - t0 end
inputs = [f32.([1, 2, 3, 4]), f32.([1, 1, 1, 1])]

IO.puts("\n== deadlines at every wait, many callers (bench/waits_bench.exs) ==")

# 1. timeout: 200 while another runtime's load holds the gate 3 s
m =
  HexagonTpu.load_model!({:binary, bin},
    runtime: Runtime.open!(backend: :reference),
    graph: "add_f32"
  )

latency.("contextCreateFromBinary", 3_000_000)
load = Task.async(fn -> Context.load(Runtime.open!(backend: :reference), {:binary, bin}) end)
:ok = wait_until.(fn -> HexagonTpu.stats().gate_writers >= 1 end)
t0 = System.monotonic_time(:millisecond)
{:error, %{reason: :timeout}} = HexagonTpu.predict(m, inputs, timeout: 200)
row.("timeout: 200 while another runtime's load holds the gate 3 s (ms)", ms.(t0), "<= 250")
{:ok, _} = Task.await(load, 10_000)
latency.("contextCreateFromBinary", 0)

# 2. timeout: 200 on model C while model A is hung (3 s) and a load waits for the gate
rt = Runtime.open!(backend: :reference)
a = HexagonTpu.load_model!({:binary, bin}, runtime: rt, graph: "add_f32")
c = HexagonTpu.load_model!({:binary, bin}, runtime: rt, graph: "mul_f32")
graph_latency.("add_f32", 3_000_000)
hung = Task.async(fn -> HexagonTpu.predict(a, inputs) end)
:ok = wait_until.(fn -> HexagonTpu.stats().executes_in_flight >= 1 end)
load = Task.async(fn -> Context.load(Runtime.open!(backend: :reference), {:binary, bin}) end)
:ok = wait_until.(fn -> HexagonTpu.stats().gate_writers >= 1 end)
t0 = System.monotonic_time(:millisecond)
answer = HexagonTpu.predict(c, inputs, timeout: 200)
took = ms.(t0)

row.(
  "timeout: 200 on model C, model A hung, a load waiting (ms; #{elem(answer, 0)})",
  took,
  "<= 250"
)

{:ok, _} = Task.await(hung, 10_000)
{:ok, _} = Task.await(load, 10_000)
graph_latency.("add_f32", 0)

# 3. 1,000 concurrent predict/3 callers on one model, default options, a 1 ms execute
latency.("graphExecute", 1_000)

results =
  1..1_000
  |> Enum.map(fn i ->
    Task.async(fn ->
      {i, HexagonTpu.predict(a, [f32.([i, i, i, i]), f32.([1, 2, 3, 4])], output: :binary)}
    end)
  end)
  |> Task.await_many(120_000)

wrong =
  Enum.count(results, fn {i, r} ->
    r != {:ok, [f32.([i + 1, i + 2, i + 3, i + 4])]}
  end)

row.("1,000 concurrent predict/3 callers on one model: errors or wrong answers", wrong, "0")
latency.("graphExecute", 0)

# 4. OS threads with 5,000 loaded idle models (each called once: its workers started)
threads = fn -> length(File.ls!("/proc/self/task")) end
before = threads.()
rt5 = Runtime.open!(backend: :reference)

models =
  for _ <- 1..5_000 do
    model = HexagonTpu.load_model!({:binary, bin}, runtime: rt5, graph: "add_f32")
    {:ok, call} = HexagonTpu.predict_async(model, inputs)
    {:ok, _} = HexagonTpu.await(call)
    model
  end

:ok =
  Enum.reduce_while(1..60_000, nil, fn _, _ ->
    if HexagonTpu.stats().worker_threads == 0,
      do: {:halt, :ok},
      else: Process.sleep(1) && {:cont, nil}
  end)

row.("OS threads of the VM with 5,000 loaded idle models (#{before} before)", threads.(), "<= 64")
Enum.each(models, &HexagonTpu.close/1)
File.rm_rf!(dir)
