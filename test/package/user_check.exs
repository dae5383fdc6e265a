# Run by test/package/run.sh inside a fresh `mix new` project that depends on the package by
# path, with Nx and :telemetry on ERL_LIBS (built from the vendored sources) or among the
# project's deps (from Hex, in the release workflow): what a user of the Hex package does first,
# with the reference backend. Every result is checked; any failure raises and the run exits non-zero.
defmodule PackageUser.Handler do
  def handle_event(event, measurements, metadata, pid),
    do: send(pid, {:event, event, measurements, metadata})
end

check = fn
  true, _what -> :ok
  false, what -> raise "package check failed: #{what}"
end

floats = fn bin -> for <<x::float-32-native <- bin>>, do: x end

started = for {app, _, _} <- Application.started_applications(), do: app
check.(:nx in started and :telemetry in started, "Nx and :telemetry started with hexagon_tpu")

# A model of its own, made with the reference builder the package built into priv/.
dir = Path.join(System.tmp_dir!(), "hexagon_tpu_package_#{System.unique_integer([:positive])}")
File.mkdir_p!(dir)
model_txt = Path.join(dir, "add.txt")
model_bin = Path.join(dir, "add.bin")

File.write!(model_txt, """
graph add_f32
  input a f32 [1,4]
  input b f32 [1,4]
  output y f32 [1,4]
  op ElementWiseAdd a b -> y
graph muladd_f32
  input a f32 [1,4]
  input b f32 [1,4]
  static s f32 [1,4] data=[3,3,3,3]
  native t f32 [1,4]
  output y f32 [1,4]
  op ElementWiseMultiply a s -> t
  op ElementWiseAdd t b -> y
graph scale_u8
  input x u8 [1,4] scale=0.1 zero_point=128
  static s u8 [1,4] scale=0.02 zero_point=0 data=[50,100,150,200]
  output y u8 [1,4] scale=0.1 zero_point=128
  op ElementWiseMultiply x s -> y
""")

refbuild = Application.app_dir(:hexagon_tpu, "priv/htpu-refbuild")
{out, status} = System.cmd(refbuild, [model_txt, model_bin], stderr_to_stdout: true)
check.(status == 0, "htpu-refbuild: #{out}")

:ok =
  :telemetry.attach(
    "package-user",
    [:hexagon_tpu, :execute, :stop],
    &PackageUser.Handler.handle_event/4,
    self()
  )

# predict/3: the README's quick start, binary and Nx.
{:ok, scale} = HexagonTpu.load_model(model_bin, backend: :reference, graph: "scale_u8")
image = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-native>>
{:ok, [scores]} = HexagonTpu.predict(scale, [image], output: :binary)
check.(floats.(scores) == [1.0, 4.0, 9.0, 12.699999809265137], "predict: #{inspect(scores)}")

{:ok, [tensor]} = HexagonTpu.predict(scale, [Nx.tensor([[1.0, 2.0, 3.0, 4.0]])])
check.(Nx.to_flat_list(tensor) == [1.0, 4.0, 9.0, 12.699999809265137], "predict with Nx")

receive do
  {:event, [:hexagon_tpu, :execute, :stop], %{duration: d}, %{graph: "scale_u8", status: :ok}}
  when is_integer(d) ->
    :ok
after
  5_000 -> raise "package check failed: no [:hexagon_tpu, :execute, :stop] event"
end

# predict_batch/3: three rows through a batch-1 graph.
{:ok, add} = HexagonTpu.load_model(model_bin, backend: :reference, graph: "add_f32")
a = Nx.iota({3, 4}, type: :f32)
b = Nx.broadcast(Nx.tensor(10.0), {3, 4})
{:ok, [sum]} = HexagonTpu.predict_batch(add, [a, b])
check.(Nx.to_flat_list(sum) == Enum.map(0..11, &(&1 + 10.0)), "predict_batch: #{inspect(sum)}")

# A Serving under a supervisor, called by concurrent callers, on a graph whose two inputs are
# not interchangeable (y = 3a + b), with a list of tensors and with an Nx.Batch per input (the
# form Ortex.Serving and Bumblebee users write): a swap or a row of another caller shows.
{:ok, muladd} = HexagonTpu.load_model(model_bin, backend: :reference, graph: "muladd_f32")
serving = HexagonTpu.Serving.new(muladd, batch_size: 4, batch_timeout: 2)

{:ok, sup} =
  Supervisor.start_link([{Nx.Serving, serving: serving, name: PackageUser.Serving}],
    strategy: :one_for_one
  )

results =
  1..8
  |> Task.async_stream(fn i ->
    a = Nx.tensor([[i, i, i, i]], type: :f32)
    b = Nx.tensor([[100 * i, 1, 2, 3]], type: :f32)

    [y] =
      if rem(i, 2) == 0,
        do: Nx.Serving.batched_run(PackageUser.Serving, [a, b]),
        else:
          Nx.Serving.batched_run(PackageUser.Serving, [
            Nx.Batch.stack([Nx.squeeze(a, axes: [0])]),
            Nx.Batch.stack([Nx.squeeze(b, axes: [0])])
          ])

    {i, Nx.to_flat_list(y)}
  end)
  |> Enum.map(fn {:ok, result} -> result end)

for {i, y} <- results do
  want = [3.0 * i + 100 * i, 3.0 * i + 1, 3.0 * i + 2, 3.0 * i + 3]
  check.(y == want, "serving row #{i}: #{inspect(y)}, expected #{inspect(want)}")
end

:ok = Supervisor.stop(sup)
:ok = :telemetry.detach("package-user")
:ok = HexagonTpu.close(add)
:ok = HexagonTpu.close(muladd)
:ok = HexagonTpu.close(scale)
File.rm_rf!(dir)

IO.puts(
  "package user: predict, predict_batch, Serving and a telemetry handler OK " <>
    "(hexagon_tpu #{Application.spec(:hexagon_tpu, :vsn)}, nx #{Application.spec(:nx, :vsn)}, " <>
    "telemetry #{Application.spec(:telemetry, :vsn)})"
)
