defmodule HexagonTpu.ProfileTelemetryTest do
  # [:hexagon_tpu, :profile] from sampled executes (profile_every), through predict/3 and
  # through HexagonTpu.Serving; runs only when :telemetry (and, for the serving, Nx) is present.
  use ExUnit.Case, async: false

  @moduletag :telemetry
  @moduletag skip: HexagonTpu.TestModels.optional_skip(:telemetry)
  @compile {:no_warn_undefined, [:telemetry]}

  import HexagonTpu.TestModels

  setup_all do
    %{path: build_file!(File.read!("models/chain100/chain100.txt"), "chain100_tel")}
  end

  setup do
    test = self()
    id = "#{inspect(test)}-#{System.unique_integer()}"
    :ok = :telemetry.attach(id, [:hexagon_tpu, :profile], &__MODULE__.forward/4, test)
    on_exit(fn -> :telemetry.detach(id) end)
    :ok
  end

  def forward(event, measurements, metadata, test),
    do: send(test, {:event, event, measurements, metadata})

  defp input, do: for(i <- 0..1023, into: <<>>, do: <<rem(i, 9) / 2 - 2::float-32-native>>)

  test "one execute in N emits the per-op figures", %{path: path} do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference, profile_every: 3)
    for _ <- 1..7, do: {:ok, _} = HexagonTpu.predict(m, [input()], output: :binary)

    for _ <- 1..3 do
      assert_receive {:event, [:hexagon_tpu, :profile], meas, meta}
      assert meas.accel_cycles > 0 and meas.execute_ns > 0 and meas.total_ns >= meas.execute_ns
      assert meta.graph == "chain100" and meta.level == :detailed and meta.chunks == 1
      assert length(meta.ops) == 100
      assert %{name: _, us: _, cycles: c, share: _} = hd(meta.ops)
      assert c == Enum.max(Enum.map(meta.ops, & &1.cycles))
      assert %HexagonTpu.Profile{runs: 1, events: nil} = meta.profile
      # the shares add up to the whole, and the event tree is made when asked for
      assert_in_delta Enum.sum(Enum.map(meta.ops, & &1.share)), 100.0, 0.01
      assert {:ok, [%{name: "execute", children: kids}]} = HexagonTpu.Profile.events(meta.profile)
      assert %{children: nodes} = Enum.find(kids, &(&1.type == 3004))
      assert length(nodes) == 100 and hd(nodes).identifier == "add_00"
    end

    refute_receive {:event, [:hexagon_tpu, :profile], _, _}, 200
    HexagonTpu.close(m)
  end

  test "a model loaded without profile_every emits nothing", %{path: path} do
    {:ok, m} = HexagonTpu.load_model(path, backend: :reference)
    {:ok, _} = HexagonTpu.predict(m, [input()], output: :binary)
    refute_receive {:event, [:hexagon_tpu, :profile], _, _}, 200
    HexagonTpu.close(m)
  end

  # Compiled only where Nx is loadable (`make test` runs without it): no code here calls a
  # missing Nx.
  if Code.ensure_loaded?(Nx) do
    @tag :nx
    @tag skip: HexagonTpu.TestModels.optional_skip(:nx)
    test "HexagonTpu.Serving samples its batches", %{path: path} do
      serving =
        HexagonTpu.Serving.new(path, backend: :reference, profile_every: 2, profile_level: :basic)

      x = Nx.tensor([Enum.map(0..1023, &(rem(&1, 9) / 2 - 2))], type: {:f, 32})
      for _ <- 1..4, do: [_y] = Nx.Serving.run(serving, [x])

      for _ <- 1..2,
          do:
            assert_receive(
              {:event, [:hexagon_tpu, :profile], %{accel_us: _}, %{level: :basic, ops: []}}
            )

      refute_receive {:event, [:hexagon_tpu, :profile], _, _}, 200
    end
  end
end
