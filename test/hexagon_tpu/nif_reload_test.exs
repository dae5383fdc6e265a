defmodule HexagonTpu.NifReloadTest do
  # Not async: it unloads and reloads the NIF module under everyone's feet.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.NIF

  test "the NIF is loaded" do
    # function_exported/3 does not load the module: when this file runs alone, nothing has yet
    Code.ensure_loaded!(NIF)
    assert :erlang.function_exported(NIF, :graph_execute, 4)
    assert %{live_graphs: _} = HexagonTpu.stats()
  end

  test "upgrade: load a new copy of the module, purge the old, models keep working" do
    model = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
    {NIF, beam, file} = :code.get_object_code(NIF)

    # The current code becomes old; on_load of the new one runs the NIF's upgrade callback.
    assert {:module, NIF} = :code.load_binary(NIF, file, beam)
    assert :code.soft_purge(NIF)
    assert {:ok, _} = add(model)

    # The reaper survived the old instance's unload: a dropped model is still closed off-scheduler.
    before = HexagonTpu.stats()

    {pid, ref} =
      spawn_monitor(fn ->
        HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
      end)

    assert_receive {:DOWN, ^ref, :process, ^pid, :normal}, 30_000

    assert wait_until(fn ->
             settle()
             HexagonTpu.stats().reaper_queued > before.reaper_queued
           end),
           "the dropped model never reached the reaper"

    assert HexagonTpu.stats().reaper_inline == before.reaper_inline
    HexagonTpu.close(model)
  end

  test "purge and reload: old handles are :closed errors (never a crash) and still get freed" do
    base = settle()
    old = HexagonTpu.load_model!({:binary, build!(add_f32())}, backend: :reference)
    assert :code.delete(NIF)
    # Only old code is left: purging it runs nothing yet, since `old` still holds resources
    # whose destructor lives in the old library instance.
    assert :code.purge(NIF) == false
    refute :erlang.module_loaded(NIF)

    assert {:module, NIF} = Code.ensure_loaded(NIF)
    # ERTS unlinks a purged library's resource types: the old handle is unusable now.
    assert {:error, %HexagonTpu.Error{reason: :closed, message: msg}} = add(old)
    assert msg =~ "purged"
    # ... while a reference no copy of the library made is still not a handle at all
    assert {:error, %HexagonTpu.Error{reason: :invalid_argument, message: forged}} =
             add(%{old | ref: make_ref()})

    assert forged =~ "not a hexagon_tpu graph handle: the reference was not made by this library"
    assert HexagonTpu.close(old) == :ok

    # The shared runtime was made by the purged copy too: a fresh one replaces it.
    assert {:ok, new} = HexagonTpu.load_model({:binary, build!(add_f32())}, backend: :reference)
    assert {:ok, [y]} = add(new)
    assert from_f32(y) == [2.0, 3.0, 4.0, 5.0]
    HexagonTpu.close(new)

    # Dropping the old handles runs the old destructors: everything is freed.
    _ = old
    HexagonTpu.Runtime.close_shared()
    {:ok, _} = HexagonTpu.Runtime.shared(backend: :reference)
    assert settle().live_graphs == base.live_graphs
  end
end
