defmodule HexagonTpu.Error do
  @moduledoc """
  The one error shape of hexagon_tpu.

  Every non-raising function returns `{:error, %HexagonTpu.Error{}}`; the `!` variants raise
  it. Match on `:reason`:

  | reason | meaning |
  |---|---|
  | `:mismatch` | input count, shape, type or byte size differs from the graph (`:tensor` names the tensor) |
  | `:invalid_option` | unknown option or bad option value (e.g. a `:perf_profile` that is not one of `HexagonTpu.Runtime.perf_profiles/0`) |
  | `:invalid_argument` | a bad argument (e.g. not a list of inputs, or a struct whose `:ref` is not a hexagon_tpu handle of its kind: "not a hexagon_tpu graph handle: ...") |
  | `:closed` | the runtime, context, graph or `HexagonTpu.SharedIO` was closed |
  | `:not_found` | no graph with that name (the message lists the graphs) |
  | `:io` / `:model` | the model file cannot be read / is not a valid context binary |
  | `:qnn_error` | a QNN call failed: `:qnn_code` and `:qnn_name` say which (e.g. 1007, `"QNN_COMMON_ERROR_SYSTEM_COMMUNICATION"`: the DSP restarted, and the runtime was opened with `recovery: false` or the restart was transient) |
  | `:device_reset` | the DSP restarted and the model could not be recovered (recovery failed, or QNN 1011); the handles stay safe to close: open a fresh runtime (`HexagonTpu.Runtime.close_shared/0`) and load again |
  | `:incompatible` | the context binary was built for another device or a newer SDK; the message names both sides ("built for v73, this device is v68") |
  | `:unsupported` | e.g. a performance profile on a backend without the HTP perf infrastructure |
  | `:load_backend`, `:load_system`, `:symbol`, `:no_provider`, `:version` | the QNN libraries could not be loaded (the message names the stage, path and `dlerror()`) |
  | `:system_layout` | the QNN system library's answer is not laid out as its System API version implies (e.g. QAIRT 2.13's `libQnnSystem.so`, which reports 1.1.0 with older struct sizes): the message names the library, its version and the field that looked wrong; use the `libQnnSystem.so` of the QAIRT release of the backend |
  | `:too_large` | a request of more rows than an `HexagonTpu.Serving`'s `batch_size` given to `Nx.Serving` (the message names both, `:details` holds `%{rows: rows, batch_size: limit}`; `HexagonTpu.Serving.batched_run/3` splits it) |
  | `:unavailable`, `:timeout` | `HexagonTpu.Serving.batched_run/3`: no node serves the name (or its node went down and retries did not answer) / no answer within its `:timeout` |
  | `:nan` | an f32 input holds NaN, which cannot be quantized (`:tensor` names the input) |
  | `:nx_error` | Nx outputs were asked for (`output: :auto` with Nx present, or `:nx`) but Nx could not build them, e.g. its application is not started: the message says what to do (`output: :binary` always works) |
  | `:no_memory`, `:busy` | as the C API's `HTPU_E*` codes |
  | `:nif_not_loaded` | raised, not returned, by any call when the NIF library (`priv/hexagon_tpu_nif.so`) could not be loaded: missing, broken or built for another machine; the message names the file and the reason (the application refuses to start with the same message) |
  | `:cancelled` | the execute was skipped when its turn came because its caller was gone (a killed process never sees it; `HexagonTpu.Stats.native/0` counts them) |

  The C reasons are `htpu_err_name/1` of the C API without the `HTPU_E` prefix, lower case
  (`HTPU_EQNN` is `:qnn_error`, `HTPU_EINVAL` `:invalid_argument`, `HTPU_ENOMEM` `:no_memory`).

      case HexagonTpu.predict(model, [image]) do
        {:ok, [scores]} -> scores
        {:error, %HexagonTpu.Error{reason: :device_reset}} -> :reload
        {:error, %HexagonTpu.Error{reason: :qnn_error, qnn_code: 1007}} -> :retry
        {:error, error} -> raise error
      end
  """

  defexception [:reason, :message, :qnn_code, :qnn_name, :tensor, :details]

  @type t :: %__MODULE__{
          reason: atom(),
          message: String.t(),
          qnn_code: non_neg_integer() | nil,
          qnn_name: String.t() | nil,
          tensor: String.t() | nil,
          details: map() | nil
        }

  @impl true
  def message(%__MODULE__{reason: reason, message: message}), do: "#{reason}: #{message}"

  @doc false
  @spec new(atom(), String.t(), keyword()) :: t()
  def new(reason, message, fields \\ []) do
    struct!(%__MODULE__{reason: reason, message: message}, fields)
  end

  @doc false
  # {reason, message, qnn_code, qnn_name | nil} as built by c_src/convert.c
  @spec from_nif({atom(), String.t(), non_neg_integer(), String.t() | nil}) :: t()
  def from_nif({reason, message, qnn_code, qnn_name}) do
    %__MODULE__{
      reason: reason,
      message: message,
      qnn_code: if(qnn_code == 0, do: nil, else: qnn_code),
      qnn_name: qnn_name
    }
  end

  @doc false
  # Fills `:tensor` of a :mismatch or :nan error the C core reported, when its message names
  # one of `names` (the tensors of the graph involved) as "input 'x'", "output 'x'" or
  # "tensor 'x'" - the forms the core and the NIF write. Conservative: the first such mention
  # only, and only a name of the graph; anything else leaves `:tensor` nil.
  @spec put_tensor(term(), [String.t()]) :: term()
  def put_tensor({:error, %__MODULE__{tensor: nil, reason: reason, message: msg} = e}, names)
      when reason in [:mismatch, :nan] and is_binary(msg) do
    case Regex.run(~r/\b(?:input|output|tensor) '([^']*)'/, msg, capture: :all_but_first) do
      [name] -> if name in names, do: {:error, %{e | tensor: name}}, else: {:error, e}
      _ -> {:error, e}
    end
  end

  def put_tensor(other, _names), do: other

  @doc false
  # Wraps a NIF answer: {:ok, ...} passes through, {:error, nif_tuple} becomes an Error.
  def wrap({:error, {_, _, _, _} = nif_error}), do: {:error, from_nif(nif_error)}
  def wrap(other), do: other

  @doc false
  # The `!` functions: the value of {:ok, value}, or the error raised.
  def unwrap!({:ok, value}), do: value
  def unwrap!({:error, %__MODULE__{} = error}), do: raise(error)
end
