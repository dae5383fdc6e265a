defmodule HexagonTpu.NpuLockTest do
  # The NPU lock between the htpu command and this VM (two real processes): session creation is
  # serialised both ways, a wait honours the load's timeout and names the holder. Order is
  # proven by the reference backend's session log (HTPU_REF_SESSION_LOG) and a process held
  # inside a creation until a FIFO is written (HTPU_REF_HOLD), never by timing.
  use ExUnit.Case, async: false

  import HexagonTpu.BoardTree
  import HexagonTpu.TestModels
  alias HexagonTpu.{Context, Error, Runtime}

  setup_all do
    %{htpu: htpu!(), model: build_file!(add_f32(), "npu_lock_add")}
  end

  setup do
    # htpu's --root: a board where nothing else runs (an empty /proc), so its guard passes quietly
    dir = root!("npu_lock")
    File.mkdir_p!(Path.join(dir, "proc"))
    fifo = Path.join(dir, "gate")
    {_, 0} = System.cmd("mkfifo", [fifo])
    # a test that failed while something was held inside a creation: let it go, or this VM's
    # execute gate (or htpu) would stay held for the rest of the suite
    on_exit(fn ->
      if not File.exists?(fifo <> ".released"),
        do: System.cmd("timeout", ["5", "sh", "-c", "echo go > '#{fifo}'"])
    end)

    %{lock: Path.join(dir, "npu.lock"), log: Path.join(dir, "sessions.log"), fifo: fifo, dir: dir}
  end

  defp lines(log),
    do: if(File.exists?(log), do: String.split(File.read!(log), "\n", trim: true), else: [])

  defp line_of(log, prefix), do: Enum.find_index(lines(log), &String.starts_with?(&1, prefix))
  defp has_line?(log, prefix), do: line_of(log, prefix) != nil

  # opens the FIFO for writing and closes it: the held creation goes on
  defp release(fifo) do
    {_, 0} = System.cmd("sh", ["-c", "echo go > '#{fifo}'"])
    File.write!(fifo <> ".released", "")
  end

  # htpu bench in the background, held inside its context creation; returns {port, os_pid}
  defp held_htpu(c, extra_env \\ []) do
    args = ~w(bench #{c.model} --backend reference -n 2 --npu-lock #{c.lock}) ++ ["--root", c.dir]

    env =
      [
        {"HTPU_REF_SESSION_LOG", c.log},
        {"HTPU_REF_HOLD", "contextCreateFromBinary:#{c.fifo}"}
      ] ++ extra_env

    port =
      Port.open({:spawn_executable, c.htpu}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args: args,
        env: env_chars(env)
      ])

    {:os_pid, pid} = Port.info(port, :os_pid)
    assert wait_until(fn -> has_line?(c.log, "#{pid} contextCreateFromBinary held") end, 60_000)
    {port, pid}
  end

  defp env_chars(env), do: for({k, v} <- env, do: {String.to_charlist(k), String.to_charlist(v)})

  defp port_exit(port) do
    receive do
      {^port, {:exit_status, status}} -> status
    after
      60_000 -> flunk("htpu did not finish")
    end
  end

  test "htpu holds the lock: this VM's load waits for it, creating nothing meanwhile", c do
    # this VM's runtime first (its backend and device, under the lock while it is free)
    {:ok, rt} =
      Runtime.open(backend: :reference, npu_lock: c.lock, env: [{"HTPU_REF_SESSION_LOG", c.log}])

    beam = System.pid()
    {port, htpu} = held_htpu(c)
    waits = HexagonTpu.stats().npu_lock_waits
    task = Task.async(fn -> Context.load(rt, c.model, timeout: 60_000) end)
    # the event: the load is inside the lock's wait
    assert wait_until(fn -> HexagonTpu.stats().npu_lock_waiting > 0 end, 60_000)
    refute has_line?(c.log, "#{beam} contextCreateFromBinary")

    release(c.fifo)
    assert {:ok, ctx} = Task.await(task, 60_000)
    assert port_exit(port) == 0
    # this VM's context creation began after htpu's ended
    assert line_of(c.log, "#{beam} contextCreateFromBinary begin") >
             line_of(c.log, "#{htpu} contextCreateFromBinary resumed")

    assert HexagonTpu.stats().npu_lock_waits == waits + 1
    Context.close(ctx)
    Runtime.close(rt)
  end

  test "a load's timeout bounds its wait, and the error names htpu", c do
    {:ok, rt} = Runtime.open(backend: :reference, npu_lock: c.lock, npu_lock_timeout: 60_000)
    {:ok, short} = Runtime.open(backend: :reference, npu_lock: c.lock, npu_lock_timeout: 150)
    {port, htpu} = held_htpu(c)
    timeouts = HexagonTpu.stats().npu_lock_timeouts

    assert {:error, %Error{reason: :timeout, message: msg}} =
             Context.load(rt, c.model, timeout: 200)

    assert msg =~ "waited"

    assert msg =~
             "for the NPU lock '#{c.lock}', held by pid #{htpu} (htpu), loading file '#{c.model}'"

    assert HexagonTpu.stats().npu_lock_timeouts == timeouts + 1

    # a runtime's own bound, for loads without a timeout; and for a runtime's own creation
    assert {:error, %Error{reason: :timeout}} = Context.load(short, c.model)

    assert {:error, %Error{reason: :timeout, message: open_msg}} =
             Runtime.open(backend: :reference, npu_lock: c.lock, npu_lock_timeout: 100)

    assert open_msg =~ "creating the QNN backend and device: waited"
    release(c.fifo)
    assert port_exit(port) == 0
    assert {:ok, ctx} = Context.load(short, c.model)
    Context.close(ctx)
    Runtime.close(short)
    Runtime.close(rt)
  end

  test "this VM holds the lock: htpu waits, times out naming it, and goes on after", c do
    # held inside this VM's context creation (the hold rides on the runtime's env: option)
    {:ok, rt} =
      Runtime.open(
        backend: :reference,
        npu_lock: c.lock,
        env: [
          {"HTPU_REF_SESSION_LOG", c.log},
          {"HTPU_REF_HOLD", "contextCreateFromBinary:#{c.fifo}"}
        ]
      )

    beam = System.pid()
    # the VM's process name as the kernel has it: beam.smp, or the dynamic loader's name where
    # the VM is started through it (the trixie OTP of `make test-elixir-trixie`)
    name = "/proc/#{beam}/comm" |> File.read!() |> String.trim()
    task = Task.async(fn -> Context.load(rt, c.model) end)
    assert wait_until(fn -> has_line?(c.log, "#{beam} contextCreateFromBinary held") end, 60_000)

    htpu_log = Path.join(c.dir, "htpu.log")
    args = ~w(bench #{c.model} --backend reference -n 2 --npu-lock #{c.lock} --timeout 300)

    {out, status} =
      System.cmd(c.htpu, args ++ ["--root", c.dir],
        env: [{"HTPU_REF_SESSION_LOG", htpu_log}],
        stderr_to_stdout: true
      )

    assert status == 1
    assert out =~ "htpu bench: waiting for the NPU lock, held by pid #{beam} (#{name})"
    assert out =~ "HTPU_ETIMEDOUT"
    assert out =~ "held by pid #{beam} (#{name}), loading file '#{c.model}'"
    refute File.exists?(htpu_log), "htpu created a session while this VM held the lock"

    # htpu without a timeout of its own: it waits, then runs once this VM's load is through
    port =
      Port.open({:spawn_executable, c.htpu}, [
        :binary,
        :exit_status,
        :stderr_to_stdout,
        args:
          ~w(bench #{c.model} --backend reference -n 2 --npu-lock #{c.lock}) ++ ["--root", c.dir],
        env: env_chars([{"HTPU_REF_SESSION_LOG", c.log}])
      ])

    {:os_pid, htpu} = Port.info(port, :os_pid)
    assert_receive {^port, {:data, said}}, 60_000
    assert said =~ "waiting for the NPU lock, held by pid #{beam} (#{name})"
    refute has_line?(c.log, "#{htpu} ")
    release(c.fifo)
    assert {:ok, ctx} = Task.await(task, 60_000)
    assert port_exit(port) == 0

    assert line_of(c.log, "#{htpu} backendCreate begin") >
             line_of(c.log, "#{beam} contextCreateFromBinary resumed")

    Context.close(ctx)
    Runtime.close(rt)
  end
end
