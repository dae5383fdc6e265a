defmodule HexagonTpu.LoadModelsTest do
  # HexagonTpu.load_models/2: several models in one call, through one list load where the
  # backend announces it (212) and one after another where not, with the same models and
  # answers; each model's own options and errors; load_models!/2 all or nothing. The backend's
  # controls are process-wide: not async.
  use ExUnit.Case, async: false

  import HexagonTpu.TestModels
  alias HexagonTpu.{Error, NIF, Runtime}

  @add String.replace(add_f32(), "graph add_f32", "graph lm_add")
  @scale """
  graph lm_scale
    input x f32 [1,4]
    static k f32 [1,4] data=[2,4,6,8]
    output y f32 [1,4]
    op ElementWiseMultiply x k -> y
  """

  setup_all do
    %{add: build!(@add), scale: build!(@scale)}
  end

  setup do
    on_exit(&reset_ref_controls/0)
  end

  defp floats(bin), do: for(<<v::float-32-native <- bin>>, do: v)

  defp answers(add, scale) do
    {:ok, [a]} = HexagonTpu.predict(add, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])], output: :binary)
    {:ok, [s]} = HexagonTpu.predict(scale, [f32([1, -1, 0.5, 2])], output: :binary)
    {floats(a), floats(s)}
  end

  @want {[2.0, 3.0, 4.0, 5.0], [2.0, -4.0, 3.0, 16.0]}

  defp list_calls do
    {:ok, s} = NIF.ref_control(ref_backend_lib(), :stats)
    s.list_async_calls
  end

  test "one list load where the backend announces it, one by one where not, same answers",
       %{add: add, scale: scale} do
    path = Path.join(tmp_dir!(), "lm_scale.bin")
    File.write!(path, scale)

    for list? <- [true, false] do
      unless list?, do: ref_capability(212, 1000)
      rt = Runtime.open!(backend: :reference, spill_fill_sharing: false)
      assert Runtime.info(rt).list_load == list?
      calls = list_calls()

      assert {:ok, [{:ok, a}, {:ok, s}]} =
               HexagonTpu.load_models([{:binary, add}, path], runtime: rt)

      assert list_calls() - calls == if(list?, do: 1, else: 0)
      assert a.model_info.load.list_loaded == list?
      assert s.model_info.load.list_loaded == list?
      assert answers(a, s) == @want
      HexagonTpu.close(a)
      HexagonTpu.close(s)
      Runtime.close(rt)
    end
  end

  test "each model's options and errors are its own", %{add: add, scale: scale} do
    rt = Runtime.open!(backend: :reference)
    ref_latency("contextCreateFromBinary", 300_000)

    assert {:ok,
            [
              {:ok, a},
              {:error, %Error{reason: :timeout, message: msg}},
              {:error, missing},
              {:ok, s}
            ]} =
             HexagonTpu.load_models(
               [
                 {:binary, add},
                 {{:binary, scale}, timeout: 50},
                 "/nonexistent/x.bin",
                 {{:binary, scale}, priority: :high, queue_limit: 3}
               ],
               runtime: rt,
               priority: :low
             )

    ref_latency("contextCreateFromBinary", 0)
    assert msg =~ "50 ms deadline"

    assert {missing.reason, missing.message} ==
             {:io, "cannot open '/nonexistent/x.bin': No such file or directory"}

    assert {a.priority, s.priority} == {:low, :high}
    assert answers(a, s) == @want
    HexagonTpu.close(a)
    HexagonTpu.close(s)
    Runtime.close(rt)
  end

  test "a bad option or source fails the whole call before anything loads", %{add: add} do
    before = live()

    for {sources, opts, reason, text} <- [
          {[], [backend: :reference], :invalid_argument, "non-empty list of sources"},
          {:nope, [backend: :reference], :invalid_argument, "non-empty list of sources"},
          {[{:binary, add} | :tail], [backend: :reference], :invalid_argument,
           "non-empty list of sources"},
          {[{:binary, add}], :bad, :invalid_option, "expected options to be a keyword list"},
          {[{:binary, add}], [{:backend, :reference} | :tail], :invalid_option,
           "expected options to be a keyword list"},
          {[{:binary, add}, {{:binary, add}, [priority: :urgent]}], [backend: :reference],
           :invalid_option, "model 1: expected :priority"},
          {[{:binary, add}, 42], [backend: :reference], :invalid_argument, "model 1:"},
          # a bad option of the call's is named as the call's, not as its first model's
          {[{:binary, add}], [backend: :reference, priority: :urgent], :invalid_option,
           "HexagonTpu.load_models/2: expected :priority"},
          {[{:binary, add}], [backend: :reference, memory_limit_mb: Bitwise.bsl(1, 44)],
           :invalid_option, "HexagonTpu.load_models/2: expected :memory_limit_mb"},
          {[{:binary, add}, {:binary, <<>>}], [backend: :reference], :invalid_argument,
           "model 1: the binary is empty"},
          {[{:binary, add}], [backend: :reference, runtime: :x], :invalid_option, ":runtime"}
        ] do
      assert {:error, %Error{reason: ^reason, message: msg}} =
               HexagonTpu.load_models(sources, opts)

      assert msg =~ text
    end

    assert live() == before
  end

  test "runtime options are the whole call's: the errors say so and name load_models/2",
       %{add: add} do
    rt = Runtime.open!(backend: :reference)

    assert {:error, %Error{reason: :invalid_option, message: msg}} =
             HexagonTpu.load_models([{:binary, add}], runtime: rt, backend: :reference)

    assert msg ==
             "HexagonTpu.load_models/2: expected either :runtime or runtime options, got both " <>
               "([:backend])"

    for {key, value} <- [backend: :reference, qnn: [], perf_profile: :burst, runtime: rt] do
      assert {:error, %Error{reason: :invalid_option, message: msg}} =
               HexagonTpu.load_models([{:binary, add}, {{:binary, add}, [{key, value}]}],
                 backend: :reference
               )

      assert msg =~ "HexagonTpu.load_models/2: model 1: #{inspect(key)}"
      assert msg =~ "applies to the whole call"
      assert msg =~ "give it in the call's options"
    end

    Runtime.close(rt)
  end

  test "a DSP restart meeting one model of the list: one more create, as alone", %{add: add} do
    # the backend's rules as the board's libraries see them: the runtime's own environment
    for sharing <- [false, true] do
      rt =
        Runtime.open!(
          backend: :reference,
          spill_fill_sharing: sharing,
          env: [{"HTPU_REF_FAULTS", "contextCreateFromBinary:2:1007:1:ssr"}]
        )

      assert {:ok, results} =
               HexagonTpu.load_models(List.duplicate({:binary, add}, 3), runtime: rt)

      assert [{:ok, _}, {:ok, _}, {:ok, _}] = results

      for {:ok, m} <- results do
        assert {:ok, [y]} =
                 HexagonTpu.predict(m, [f32([1, 2, 3, 4]), f32([1, 1, 1, 1])], output: :binary)

        assert floats(y) == [2.0, 3.0, 4.0, 5.0]
        HexagonTpu.close(m)
      end

      Runtime.close(rt)
    end
  end

  test "load_models!/2 gives the models or raises, closing those that loaded", %{add: add} do
    # the calls' shared runtime stays open (the tests' idle period is :infinity): open it first,
    # so that the baseline holds it whatever test opened it, or closed it, before this one
    {:ok, _} = Runtime.shared(backend: :reference)
    before = live()
    [a, b] = HexagonTpu.load_models!([{:binary, add}, {:binary, add}], backend: :reference)
    assert {a.name, b.name} == {"lm_add", "lm_add"}
    HexagonTpu.close(a)
    HexagonTpu.close(b)

    assert_raise Error, ~r/model 1|cannot open/, fn ->
      HexagonTpu.load_models!([{:binary, add}, "/nonexistent/y.bin"], backend: :reference)
    end

    # the models' contexts and graphs are released through the reaper
    assert wait_for_live(before) == before
  end
end
