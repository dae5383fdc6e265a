# Classifies the 539 held-out handwritten digits (models/digits/) through Nx.Serving: the model
# runs as a HexagonTpu.Serving under a supervisor, and 64 concurrent callers each send one
# image at a time with Nx.Serving.batched_run/2, which batches them. Prints the accuracy, which
# must equal examples/digits.exs's (97.03%), and exits with status 1 below the same target.
#
#     mix run examples/digits_serving.exs        (needs Nx: make test-elixir-optional's
#                                                 ERL_LIBS and ERL_FLAGS, or Nx in your deps)

{:ok, _} = Application.ensure_all_started(:hexagon_tpu)

if not List.keymember?(Application.started_applications(), :nx, 0) do
  IO.puts(:stderr, "digits_serving: needs Nx (Nx.Serving), which is not loaded")
  System.halt(2)
end

dir = Path.expand("../models/digits", __DIR__)
x = File.read!(Path.join(dir, "test_x.f32"))
labels = File.read!(Path.join(dir, "test_y.u8")) |> :binary.bin_to_list()
float_pred = File.read!(Path.join(dir, "float_pred.u8")) |> :binary.bin_to_list()

serving =
  HexagonTpu.Serving.new(Path.join(dir, "digits.bin"),
    backend: :reference,
    batch_size: 64,
    batch_timeout: 2
  )

[input] = serving.arg.inputs

{:ok, _sup} =
  Supervisor.start_link([{Nx.Serving, serving: serving, name: Digits}], strategy: :one_for_one)

row_bytes = input.num_elements * 4
images = for <<row::binary-size(row_bytes) <- x>>, do: row

# one request per image, from 64 processes at a time
t0 = System.monotonic_time(:microsecond)

preds =
  images
  |> Task.async_stream(
    fn row ->
      image = row |> Nx.from_binary({:f, 32}) |> Nx.reshape(input.shape)
      [scores] = Nx.Serving.batched_run(Digits, [image])
      scores |> Nx.flatten() |> Nx.argmax(tie_break: :low) |> Nx.to_number()
    end,
    max_concurrency: 64
  )
  |> Enum.map(fn {:ok, class} -> class end)

us = System.monotonic_time(:microsecond) - t0
n = length(labels)
count = fn pairs -> Enum.count(pairs, fn {a, b} -> a == b end) end
correct = count.(Enum.zip(preds, labels))
float_correct = count.(Enum.zip(float_pred, labels))
agree = count.(Enum.zip(preds, float_pred))
pct = fn k -> :erlang.float_to_binary(100 * k / n, decimals: 2) end

IO.puts(
  "model    models/digits/digits.bin through Nx.Serving.batched_run (batch_size 64, 64 callers)"
)

IO.puts(
  "samples  #{n} (held-out), #{div(us, n)} us per image wall time, #{round(n * 1.0e6 / us)} images/s"
)

IO.puts("accuracy #{pct.(correct)}% (#{correct}/#{n}) quantized on the reference backend")

IO.puts(
  "float    #{pct.(float_correct)}% (#{float_correct}/#{n}) float model before quantization"
)

IO.puts("agree    #{pct.(agree)}% (#{agree}/#{n}) same class as the float model")

if correct * 100 < 95 * n or (float_correct - correct) * 100 > n do
  IO.puts("FAIL: the target is >= 95% and within 1 point of the float model")
  System.halt(1)
else
  IO.puts("OK: >= 95% and within 1 point of the float model")
end
