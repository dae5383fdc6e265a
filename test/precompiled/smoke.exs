# smoke.exs - the README's example against the reference backend, on whatever VM runs it.
# test/precompiled/run.sh runs it on the aarch64 BEAM under qemu with the aarch64 artifact's
# priv/; MODEL is a context binary made from examples/add.txt by that artifact's htpu-refbuild.
IO.puts(
  "smoke: OTP #{System.otp_release()}, NIF #{:erlang.system_info(:nif_version)}, " <>
    "#{:erlang.system_info(:system_architecture)}, priv #{:code.priv_dir(:hexagon_tpu)}"
)

{:ok, model} =
  HexagonTpu.load_model(System.fetch_env!("MODEL"), backend: :reference, graph: "scale_u8")

image = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-native>>
{:ok, [scores]} = HexagonTpu.predict(model, [image], output: :binary)
result = for <<x::float-32-native <- scores>>, do: x
IO.puts("smoke: predict -> #{inspect(result)}")
[1.0, 4.0, 9.0, 12.699999809265137] = result
:ok = HexagonTpu.close(model)
:ok = HexagonTpu.Runtime.close_shared()
IO.puts("smoke: ok")
