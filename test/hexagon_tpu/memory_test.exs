defmodule HexagonTpu.MemoryTest do
  # Memory figures in Elixir (docs/board.md, "Memory"): each graph's :memory from the HTP graph
  # blob info (versions 1 and 2, as the reference system library reports them from the model),
  # the load estimate, and Context.memory/1, capability-checked. The figures are worked out by
  # hand from the model text: see test/c/test_model_memory.c. The capability switch is
  # process-wide: not async.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Runtime}

  defp text(v) do
    """
    meta graph_blob=#{v}
    graph chain
      input x f32 [1,8]
      static w f32 [1,8] data=[1,2,3,4,5,6,7,8]
      native t1 f32 [1,8]
      native t2 f32 [1,8]
      output y f32 [1,8]
      op ElementWiseMultiply x w -> t1
      op Relu t1 -> t2
      op ElementWiseAdd t2 t1 -> y
    """
  end

  setup do
    on_exit(fn -> reset_ref_controls() end)
  end

  test "blob info v1 and v2 figures and the load estimate" do
    rt = Runtime.open!(backend: :reference)
    bin1 = build!(text(1))
    c1 = Context.load!(rt, {:binary, bin1})
    [%{memory: m1, vtcm_bytes: 2_097_152}] = Context.graphs(c1)
    assert %{blob_info_version: 1, spill_fill_bytes: 64, hvx_threads: 4} = m1
    # each version has only its own figures: the other's are nil, not measured zeros
    assert %{io_tensor_bytes: nil, const_bytes: nil, safe_share_io: nil} = m1
    info1 = Context.info(c1)
    assert info1.binary_bytes == byte_size(bin1)
    assert info1.load_estimate_bytes == byte_size(bin1) + 64

    bin2 = build!(text(2))
    c2 = Context.load!(rt, {:binary, bin2})
    [%{memory: m2, vtcm_bytes: 0}] = Context.graphs(c2)

    assert %{blob_info_version: 2, io_tensor_bytes: 64, op_data_bytes: 240, const_bytes: 32} = m2

    assert m2.ddr_tensor_bytes == 64
    assert %{spill_fill_bytes: nil, hvx_threads: nil, safe_share_io: false} = m2
    assert Context.info(c2).load_estimate_bytes == byte_size(bin2) + 64 + 240 + 32 + 64
    Runtime.close(rt)
  end

  test "Context.memory/1 asks the backend only where it announces the properties" do
    rt = Runtime.open!(backend: :reference)
    c = Context.load!(rt, {:binary, build!(text(1))})
    assert {:ok, %{reported: false, weights_bytes: nil, note: note}} = Context.memory(c)
    assert note =~ "capability 215"
    ref_capability(215, 0)

    assert {:ok, %{reported: true, weights_bytes: 32, spill_fill_bytes: 64, note: nil}} =
             Context.memory(c)

    Context.close(c)
    assert {:error, %HexagonTpu.Error{reason: :closed}} = Context.memory(c)
    Runtime.close(rt)
  end
end
