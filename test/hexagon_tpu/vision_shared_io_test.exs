defmodule HexagonTpu.VisionSharedIOTest do
  # detect/3 into one HexagonTpu.SharedIO from two callers at once: its input and outputs are one
  # call's from the frame written to the detections decoded, so a second call meanwhile is a
  # :busy error, never the other frame's detections. The first call is held in its execute by
  # the reference backend's per-graph latency (process-wide, so not async), and the second is
  # made once the execute is seen in flight: an event, not a duration.
  use ExUnit.Case, async: false

  alias HexagonTpu.Vision
  alias HexagonTpu.Vision.Frame
  import HexagonTpu.TestModels

  # [1, 8, 8, 3] u8 -> a [1, 5, 4] f32 head of one class whose anchor 0 scores the input's mean
  # red (/ 255) with a box at (4, 4, 8, 8): the detection says which frame went in.
  @bias [4, 0, 0, 0, 4, 0, 0, 0, 8, 1, 1, 1, 8, 1, 1, 1, 0, 0, 0, 0]
  defp detector do
    weights =
      for row <- 0..19, k <- 0..191, do: if(row == 16 and rem(k, 3) == 0, do: 1 / 64, else: 0.0)

    """
    graph busy_detector
      input  images u8 [1,8,8,3] scale=0.00392156862745098
      static w f32 [20,192] data=[#{Enum.join(weights, ",")}]
      static b f32 [20] data=[#{Enum.join(@bias, ",")}]
      native pixels u8 [1,192] scale=0.00392156862745098
      native flat f32 [1,20]
      output output0 f32 [1,5,4]
      op Reshape images -> pixels
      op FullyConnected pixels w b -> flat
      op Reshape flat -> output0
    """
  end

  @opts [head_layout: :channels_first, score: 0.05]

  setup do
    m = HexagonTpu.load_model!({:binary, build!(detector())}, backend: :reference)
    {:ok, io} = HexagonTpu.alloc_io(m)

    on_exit(fn ->
      graph_latency("busy_detector", 0)
      HexagonTpu.close(m)
    end)

    frame = fn red -> Frame.new(:binary.copy(<<red, 0, 0>>, 64), 8, 8, :rgb24) |> elem(1) end
    fa = frame.(250)
    fb = frame.(40)
    want_a = Vision.detect!(m, fa, @opts)
    want_b = Vision.detect!(m, fb, @opts)
    assert [%{score: sa}] = want_a
    assert [%{score: sb}] = want_b
    assert_in_delta sa, 250 / 255, 1.0e-5
    assert_in_delta sb, 40 / 255, 1.0e-5
    %{m: m, io: io, fa: fa, fb: fb, want_a: want_a, want_b: want_b}
  end

  test "a second detect on a SharedIO in use is :busy; the first answers for its own frame",
       %{m: m, io: io, fa: fa, fb: fb, want_a: want_a, want_b: want_b} do
    graph_latency("busy_detector", 3_000_000)
    first = Task.async(fn -> Vision.detect(m, fa, [io: io] ++ @opts) end)
    assert wait_until(fn -> HexagonTpu.stats().executes_in_flight >= 1 end)
    assert {:error, e} = Vision.detect(m, fb, [io: io] ++ @opts)
    assert e.reason == :busy
    assert e.message =~ "the SharedIO is in use by another detect call: one call at a time"
    # a call without the SharedIO is not refused (it waits for the graph's turn)
    other = Task.async(fn -> Vision.detect(m, fb, @opts) end)
    graph_latency("busy_detector", 0)
    assert Task.await(first, 15_000) == {:ok, want_a}
    assert Task.await(other, 15_000) == {:ok, want_b}
    # and the SharedIO is free again
    assert Vision.detect(m, fb, [io: io] ++ @opts) == {:ok, want_b}
  end

  test "two callers looping on one SharedIO: each answer is its own frame's, or :busy",
       %{m: m, io: io, fa: fa, fb: fb, want_a: want_a, want_b: want_b} do
    # executes of 2 ms each: the two callers' calls overlap most of the time
    graph_latency("busy_detector", 2_000)

    run = fn frame, want ->
      Task.async(fn ->
        for _ <- 1..150 do
          case Vision.detect(m, frame, [io: io] ++ @opts) do
            {:ok, ^want} -> :ok
            {:error, %{reason: :busy}} -> :busy
            other -> {:wrong, other}
          end
        end
      end)
    end

    results = [run.(fa, want_a), run.(fb, want_b)] |> Enum.flat_map(&Task.await(&1, 60_000))
    assert Enum.reject(results, &(&1 in [:ok, :busy])) == []
    assert :ok in results
  end
end
