# Compiled only where Nx is loadable (the `make test` build has no Nx): no code here calls a
# missing Nx. The distributed tests that use it are compiled under the same condition.
if Code.ensure_loaded?(Nx) do
  defmodule HexagonTpu.PeerServing do
    @moduledoc false
    # Local peer nodes (OTP's :peer) for the distributed HexagonTpu.Serving tests, and what those
    # nodes run. This module is compiled into the test build, which is on the peers' code path,
    # so the peers can call it (a test module's closures would not exist there).

    @compile {:no_warn_undefined, [:peer]}

    @doc """
    Makes this node distributed (short names) when it is not, launching epmd if it is not
    running; returns {:ok, started}, what it started (`:distribution`, `:epmd`) for
    stop_distributed/1, or {:error, why}.
    """
    def ensure_distributed do
      if Node.alive?() do
        {:ok, []}
      else
        epmd = epmd()

        launched =
          if epmd && not epmd_running?(epmd) do
            System.cmd(epmd, ["-daemon"], stderr_to_stdout: true)
            [:epmd]
          else
            []
          end

        name = :"htpu_test_#{System.pid()}_#{System.unique_integer([:positive])}"

        case :net_kernel.start([name, :shortnames]) do
          {:ok, _} -> {:ok, [:distribution | launched]}
          {:error, {:already_started, _}} -> {:ok, launched}
          {:error, reason} -> {:error, "could not start distribution: #{inspect(reason)}"}
        end
      end
    end

    @doc """
    Undoes what ensure_distributed/0 started: stops the distribution, then the epmd it launched.
    epmd refuses to stop while other nodes are registered with it, so other VMs on the machine
    that came to use it keep it.
    """
    def stop_distributed(started) do
      if :distribution in started, do: :net_kernel.stop()
      if :epmd in started, do: System.cmd(epmd(), ["-kill"], stderr_to_stdout: true)
      :ok
    end

    # epmd beside this VM's erts (a private OTP root may not be on PATH), else on PATH
    defp epmd do
      erts_epmd =
        Path.join([
          to_string(:code.root_dir()),
          "erts-#{:erlang.system_info(:version)}",
          "bin",
          "epmd"
        ])

      Enum.find([erts_epmd, System.find_executable("epmd")], &(&1 && File.exists?(&1)))
    end

    defp epmd_running?(epmd),
      do: match?({_, 0}, System.cmd(epmd, ["-names"], stderr_to_stdout: true))

    @doc """
    Starts a peer node with this node's code path and cookie (the environment, so ERL_LIBS and
    ERL_FLAGS, is inherited) and hexagon_tpu started there; returns {peer_pid, node}. Talk to it
    with :erpc (:peer.call/4 is for peers with an alternative connection).
    """
    def start_peer(tag) do
      # The OS pid too: unique integers repeat across VMs, and two suites running at once on one
      # host (two checkouts, parallel CI jobs) would otherwise ask epmd for the same name, and the
      # second peer would never boot.
      name = :"htpu_peer_#{tag}_#{System.pid()}_#{System.unique_integer([:positive])}"
      cookie = Atom.to_charlist(Node.get_cookie())
      paths = Enum.flat_map(:code.get_path(), &[~c"-pa", &1])

      # global's partition guard (OTP 25+) makes a peer disconnect from another that went down
      # and warns about it on this node, where its group leader is: the tests stop peers on
      # purpose, and the warning is noise in their output.
      args = [~c"-setcookie", cookie, ~c"-kernel", ~c"prevent_overlapping_partitions", ~c"false"]

      {:ok, pid, node} = :peer.start_link(%{name: name, args: args ++ paths, wait_boot: 30_000})

      {:ok, _} = :erpc.call(node, Application, :ensure_all_started, [:hexagon_tpu], 30_000)
      {pid, node}
    end

    @doc """
    On the peer: loads `model_bytes` into a reference runtime whose graphExecute takes
    `latency_us` more, and starts an Nx.Serving of it named `name` under a supervisor that
    outlives the RPC. Returns :ok.
    """
    def start_serving(model_bytes, name, latency_us, opts) do
      parent = self()

      spawn(fn ->
        env =
          if latency_us > 0, do: [{"HTPU_REF_LATENCY", "graphExecute:#{latency_us}"}], else: []

        rt = HexagonTpu.Runtime.open!(backend: :reference, env: env)
        model = HexagonTpu.load_model!({:binary, model_bytes}, runtime: rt)
        serving = HexagonTpu.Serving.new(model, opts)

        {:ok, sup} =
          Supervisor.start_link([{Nx.Serving, serving: serving, name: name}],
            strategy: :one_for_one
          )

        send(parent, {:started, name})
        ref = Process.monitor(sup)

        receive do
          {:DOWN, ^ref, _, _, _} -> :ok
        end
      end)

      receive do
        {:started, ^name} -> :ok
      after
        30_000 -> {:error, :timeout}
      end
    end
  end
end
