defmodule HexagonTpu.Graph.CallOptions do
  # The options of a graph's calls, checked in one place: open/2's, execute/3's (and through
  # them predict/3's, predict_batch/3's, predict_async/3's and stream/3's), the :timeout and
  # :priority checks the other modules' options share, and the options map the NIF takes for a
  # submitted call. Below HexagonTpu.Graph and its other parts; calls none of them.
  @moduledoc false

  alias HexagonTpu.{Error, Options}
  alias HexagonTpu.Runtime.Perf

  @schedulers {:one_of, [:auto, :async, :normal, :dirty_io]}
  @schedulers_expected ":auto, :async, :normal or :dirty_io"

  @priorities [:low, :normal, :normal_high, :high]
  @priorities_expected ":low, :normal, :normal_high or :high"
  # HTPU_MAX_TIMEOUT_NS (24 h)
  @max_timeout_ms 24 * 3600 * 1000

  @open_spec %{
    graph: {:string_or_nil, "a graph name (a string without NUL bytes) or nil", nil},
    scheduler: {@schedulers, @schedulers_expected, :auto}
  }

  @exec_spec %{
    quantize: {{:one_of, [:auto, :none]}, ":auto or :none", :auto},
    dequantize: {{:one_of, [:auto, :none]}, ":auto or :none", :auto},
    output: {{:one_of, [:auto, :nx, :binary]}, ":auto, :nx or :binary", :auto},
    stats: {:boolean, "a boolean", false},
    scheduler: {@schedulers, @schedulers_expected, nil},
    timeout: {&__MODULE__.check_timeout/1, "", nil},
    priority: {{:one_of, @priorities}, @priorities_expected, nil},
    perf_profile: {{:one_of, Perf.names()}, Perf.expected(), nil}
  }

  # An execute on a HexagonTpu.SharedIO: the inputs and outputs are in the buffer already.
  @shared_exec_spec Map.take(@exec_spec, [:stats, :perf_profile])

  # The options of a submitted call (predict_async/3, stream/3): execute/3's but :scheduler.
  @call_spec Map.delete(@exec_spec, :scheduler)

  # The check of a `:timeout` option (Options): a positive number of milliseconds up to 24 h,
  # or :infinity (the 24 h limit of the C core).
  @spec check_timeout(term()) :: true | {:error, String.t()}
  def check_timeout(:infinity), do: true
  def check_timeout(ms) when is_integer(ms) and ms > 0 and ms <= @max_timeout_ms, do: true

  def check_timeout(other),
    do:
      {:error,
       "expected :timeout to be a positive integer (milliseconds, at most #{@max_timeout_ms}, " <>
         "24 h) or :infinity, got #{inspect(other)}"}

  def priorities, do: @priorities
  def priorities_expected, do: @priorities_expected

  # The C core's timeout_ns: 0 for the context's (or runtime's) default.
  @spec timeout_ns(HexagonTpu.Graph.timeout_ms() | nil) :: non_neg_integer()
  def timeout_ns(nil), do: 0
  def timeout_ns(:infinity), do: @max_timeout_ms * 1_000_000
  def timeout_ns(ms), do: ms * 1_000_000

  @spec validate_open(term(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate_open(opts, where), do: Options.validate(opts, @open_spec, where)

  # execute/3's options, checked as `where` (the public function: execute/3, predict/3,
  # predict_batch/3).
  @spec validate_execute(term(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate_execute(opts, where), do: Options.validate(opts, @exec_spec, where)

  @spec validate_shared(term(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate_shared(opts, where), do: Options.validate(opts, @shared_exec_spec, where)

  @spec validate_call(term(), String.t()) :: {:ok, map()} | {:error, Error.t()}
  def validate_call(opts, where), do: Options.validate(opts, @call_spec, where)

  # The NIF's options of a submitted call: the call's :timeout and :priority, else the model's.
  @spec submit_options(HexagonTpu.Graph.t(), map()) :: map()
  def submit_options(g, o) do
    %{
      timeout_ns: timeout_ns(Map.get(o, :timeout) || g.timeout),
      priority: Map.get(o, :priority) || g.priority || :default,
      perf_profile: Map.get(o, :perf_profile)
    }
    # a sampled call's profile (HexagonTpu.Profile.next/1): the core reads it on its worker
    |> Map.merge(Map.get(o, :profile) || %{})
  end
end
