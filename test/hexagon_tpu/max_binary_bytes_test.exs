defmodule HexagonTpu.MaxBinaryBytesTest do
  # Not async: the limit is process-wide (the :hexagon_tpu application environment and the C
  # core's setting), so while this test lowers it, or sets it to an invalid value, every other
  # test's load would see it (ErrorsTest, where it was, runs alongside the async tests).
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels

  defp err({:error, %HexagonTpu.Error{} = e}), do: e

  test "a file above the configured size limit is refused before it is read" do
    path = Path.join(tmp_dir!(), "limit.bin")
    bin = build!(add_f32())
    File.write!(path, bin)
    default = HexagonTpu.NIF.max_binary_bytes()

    try do
      Application.put_env(:hexagon_tpu, :max_binary_bytes, byte_size(bin) - 1)
      e = err(HexagonTpu.load_model({:file, path}, backend: :reference))
      assert e.reason == :model
      assert e.message =~ "more than the #{byte_size(bin) - 1}-byte limit"

      Application.put_env(:hexagon_tpu, :max_binary_bytes, byte_size(bin))
      assert {:ok, model} = HexagonTpu.load_model({:file, path}, backend: :reference)
      HexagonTpu.close(model)

      Application.put_env(:hexagon_tpu, :max_binary_bytes, -1)
      e = err(HexagonTpu.load_model({:file, path}, backend: :reference))
      assert e.reason == :invalid_option
      assert e.message =~ "an integer in 1..18446744073709551615 (bytes), got -1"

      # beyond the core's uint64_t: the same error naming the range, never a raise
      for n <- [2 ** 64, 2 ** 70] do
        Application.put_env(:hexagon_tpu, :max_binary_bytes, n)
        e = err(HexagonTpu.load_model({:file, path}, backend: :reference))
        assert e.reason == :invalid_option
        assert e.message =~ ":max_binary_bytes to be an integer in 1..18446744073709551615"
        assert e.message =~ "got #{n}"
      end

      # the largest the core takes is taken
      Application.put_env(:hexagon_tpu, :max_binary_bytes, 2 ** 64 - 1)
      assert {:ok, model} = HexagonTpu.load_model({:file, path}, backend: :reference)
      HexagonTpu.close(model)
      assert HexagonTpu.NIF.max_binary_bytes() == 2 ** 64 - 1
    after
      Application.delete_env(:hexagon_tpu, :max_binary_bytes)
      HexagonTpu.NIF.set_max_binary_bytes(default)
    end
  end
end
