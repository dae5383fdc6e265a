# Stress for the shared runtime's lifetime: processes take the shared runtime, pass it on in
# messages and load models with it (after a garbage collection), while another process keeps
# calling close_shared/0. When the shared runtimes were :persistent_term literals this crashed
# the VM on OTP 25 within a minute (a segmentation fault in nif_context_open_binary reading a
# freed runtime resource; every time, with the NIF built with AddressSanitizer), since each
# caller now holds its own copy, never. Not part of the suite (it runs for SECS seconds):
#
#     SECS=60 mix run test/optional/shared_runtime_race.exs
#
# Exits 0 after SECS seconds without a crash.
defmodule SharedRuntimeRace do
  @opts [backend: :reference]

  def run(secs) do
    bin = model()
    deadline = System.monotonic_time(:millisecond) + secs * 1000
    closer = Task.async(fn -> close_loop(deadline, 0) end)
    users = for _ <- 1..4, do: Task.async(fn -> user_loop(bin, deadline, %{}) end)
    counts = Enum.map(users, &Task.await(&1, :infinity))
    closes = Task.await(closer, :infinity)
    IO.puts("shared_runtime_race: #{closes} close_shared/0, loads #{inspect(counts)}, no crash")
  end

  defp model do
    dir = Path.join(System.tmp_dir!(), "htpu-race-#{System.unique_integer([:positive])}")
    File.mkdir_p!(dir)
    src = Path.join(dir, "add.txt")
    out = Path.join(dir, "add.bin")

    File.write!(src, """
    graph add_f32
      input a f32 [1,4]
      input b f32 [1,4]
      output y f32 [1,4]
      op ElementWiseAdd a b -> y
    """)

    {_, 0} = System.cmd(HexagonTpu.Runtime.priv_path("htpu-refbuild"), [src, out])
    File.read!(out)
  end

  defp close_loop(deadline, n) do
    if System.monotonic_time(:millisecond) < deadline do
      Process.sleep(:rand.uniform(2) - 1)
      HexagonTpu.Runtime.close_shared()
      close_loop(deadline, n + 1)
    else
      n
    end
  end

  defp user_loop(bin, deadline, counts) do
    if System.monotonic_time(:millisecond) < deadline do
      parent = self()
      for _ <- 1..4, do: spawn(fn -> send(parent, {:rt, HexagonTpu.Runtime.shared(@opts)}) end)
      Process.sleep(:rand.uniform(3))
      results = for _ <- 1..4, do: receive_and_load(bin)

      user_loop(
        bin,
        deadline,
        Enum.reduce(results, counts, &Map.update(&2, &1, 1, fn c -> c + 1 end))
      )
    else
      counts
    end
  end

  defp receive_and_load(bin) do
    receive do
      {:rt, {:ok, rt}} ->
        :erlang.garbage_collect()

        case HexagonTpu.Context.load(rt, {:binary, bin}) do
          {:ok, ctx} ->
            HexagonTpu.Context.close(ctx)
            :ok

          {:error, e} ->
            e.reason
        end

      {:rt, {:error, e}} ->
        e.reason
    end
  end
end

SharedRuntimeRace.run(String.to_integer(System.get_env("SECS", "60")))
