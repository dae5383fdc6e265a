defmodule HexagonTpu.Runtime.Shared do
  # Runtime.shared/1's runtimes: one per set of open/1 options (`:env` and `:open_timeout`
  # aside), kept in HexagonTpu.KeyLock's table under {HexagonTpu.Runtime, :shared, options}
  # and opened under that key's lock, so concurrent first callers get one runtime. Also the idle
  # period they are kept for (Runtime.Retirement closes them after it), checked on every use.
  #
  # The caller passes the opener (Runtime.open/1), so this module sits below HexagonTpu.Runtime
  # and calls none of it; it closes a runtime with the NIF call Runtime.close/1 makes.
  @moduledoc false

  alias HexagonTpu.{Error, KeyLock, NIF, Options}
  alias HexagonTpu.Runtime.OpenOptions

  # The keys' tag: HexagonTpu.Runtime, as when that module kept this table (the tests look the
  # keys up by it). Written as an atom: naming the module here is data, not a use of it.
  @key_tag :"Elixir.HexagonTpu.Runtime"

  @default_idle_ms 60_000
  @idle_expected "a non-negative integer (milliseconds) or :infinity"

  @type opener :: (keyword() -> {:ok, HexagonTpu.Runtime.t()} | {:error, Error.t()})

  # The runtime for `opts`, opened with `open` when there is none (Runtime.shared/1).
  @spec get(term(), opener()) :: {:ok, HexagonTpu.Runtime.t()} | {:error, Error.t()}
  def get(opts, open) do
    with {:ok, key} <- key(opts) do
      using_key(key, fn -> lookup_or_open(key, fn -> open.(opts) end) end)
    end
  end

  # `fun.(runtime)` with the runtime for `opts`, which cannot be retired meanwhile (a load must
  # not get a runtime closed under it). Returns what `fun` returns. open_timeout (ms, nil:
  # none) bounds the open when the runtime has to be opened; it is not one of the options the
  # runtime is shared by.
  @spec with_runtime(term(), (HexagonTpu.Runtime.t() -> result), term(), opener()) ::
          result | {:error, Error.t()}
        when result: term()
  def with_runtime(opts, fun, open_timeout, open) do
    with {:ok, key} <- key(opts) do
      open_opts = if open_timeout, do: [{:open_timeout, open_timeout} | opts], else: opts

      using_key(key, fn ->
        with {:ok, rt} <- lookup_or_open(key, fn -> open.(open_opts) end), do: fun.(rt)
      end)
    end
  end

  # Runtime.close_shared/0: every shared runtime closed and forgotten, each under its option
  # set's lock, so a get/2 opening a runtime for it meanwhile is neither closed nor forgotten
  # by mistake.
  @spec close_all() :: :ok
  def close_all do
    for key <- keys() do
      with_lock(key, fn ->
        case KeyLock.get(key) do
          nil ->
            :ok

          rt ->
            close(rt)
            KeyLock.delete(key)
        end
      end)
    end

    :ok
  end

  # The keys of the shared runtimes stored now.
  @spec keys() :: [term()]
  def keys, do: KeyLock.keys({@key_tag, :shared, :_})

  # A per-option-set lock on this node: waiters queue and are woken in turn, none polls.
  @spec with_lock(term(), (() -> result)) :: result when result: term()
  def with_lock(key, fun), do: KeyLock.run(key, fun)

  # Runtime.close/1's NIF call: drops the table's reference (contexts keep the runtime).
  @spec close(HexagonTpu.Runtime.t()) :: :ok
  def close(rt), do: NIF.runtime_close(rt.ref)

  # The application's :shared_runtime_idle_ms, or the error that says it is bad.
  @spec idle_ms() :: {:ok, non_neg_integer() | :infinity} | {:error, Error.t()}
  def idle_ms do
    v = Application.get_env(:hexagon_tpu, :shared_runtime_idle_ms, @default_idle_ms)

    if valid_idle_ms?(v),
      do: {:ok, v},
      else:
        {:error,
         Error.new(
           :invalid_option,
           "expected the :hexagon_tpu application's :shared_runtime_idle_ms to be " <>
             "#{@idle_expected}, got #{inspect(v)}"
         )}
  end

  def valid_idle_ms?(v), do: v == :infinity or (is_integer(v) and v >= 0)

  @spec idle_expected() :: String.t()
  def idle_expected, do: @idle_expected

  # A bad :shared_runtime_idle_ms (a string from System.get_env/1, a negative number) would
  # keep shared runtimes forever without a word: every use of a shared runtime says so instead.
  defp key(opts) do
    spec = Map.drop(OpenOptions.spec(), [:env, :open_timeout])

    with {:ok, _} <- idle_ms(),
         {:ok, o} <- Options.validate(opts, spec, "HexagonTpu.Runtime.shared/1"),
         do: {:ok, {@key_tag, :shared, o}}
  end

  # Pinned from before the lookup until the use is over (a retirement that finds no pin has
  # taken the runtime out of sight first, so this lookup cannot have seen it), then marked used.
  defp using_key(key, fun) do
    KeyLock.pin(key)

    try do
      fun.()
    after
      KeyLock.touch(key)
      KeyLock.unpin(key)
    end
  end

  defp lookup_or_open(key, open) do
    case KeyLock.get(key) do
      nil -> open_shared(key, open)
      rt -> if NIF.handle_alive(rt.ref), do: {:ok, rt}, else: open_shared(key, open)
    end
  end

  # Under the option set's lock: look again (another caller may have opened it meanwhile), open
  # only if there is still no live runtime. A dead one (closed by close/1 or close_shared/0, or
  # made by a purged copy of the NIF library) is replaced.
  defp open_shared(key, open) do
    with_lock(key, fn ->
      case KeyLock.get(key) do
        nil -> open_and_put(key, open)
        rt -> if NIF.handle_alive(rt.ref), do: {:ok, rt}, else: open_and_put(key, open)
      end
    end)
  end

  defp open_and_put(key, open) do
    with {:ok, rt} <- open.() do
      KeyLock.put(key, rt)
      {:ok, rt}
    end
  end
end
