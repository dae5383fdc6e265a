defmodule HexagonTpu.Context do
  @moduledoc """
  A QNN context: one context binary deserialized onto a runtime. It may hold several graphs.

  The context keeps its runtime alive, and each graph opened from it keeps the context alive,
  so handles can be closed (or dropped) in any order.

  ## Example

      {:ok, rt} = HexagonTpu.Runtime.open(backend: :reference)
      {:ok, ctx} = HexagonTpu.Context.load(rt, "/data/two_graphs.bin")
      HexagonTpu.Context.graph_names(ctx)   #=> ["add_f32", "scale_u8"]
      {:ok, graph} = HexagonTpu.Graph.open(ctx, graph: "scale_u8")
      :ok = HexagonTpu.Context.close(ctx)
  """

  alias HexagonTpu.{Error, NIF, Options, Runtime, TensorInfo}
  alias HexagonTpu.Graph.CallOptions

  defstruct [:ref, :info, :graphs]

  @typedoc """
  A graph the context holds, with its tensors and its memory figures (`:memory`: the HTP graph
  blob info's, see `info/1`).
  """
  @type graph_summary :: %{
          name: String.t(),
          inputs: [TensorInfo.t()],
          outputs: [TensorInfo.t()],
          vtcm_bytes: non_neg_integer(),
          memory: map()
        }

  @type source :: String.t() | {:file, Path.t()} | {:binary, binary()}
  @type t :: %__MODULE__{ref: reference(), info: map(), graphs: [graph_summary()]}

  # A path is short printable text; a context binary starts with a binary header (QNN's and the
  # reference format's both contain NUL bytes within the first 16 bytes).
  @max_path 4096
  @queue_limit_expected "a positive integer up to 4294967295 (calls) or nil (no limit)"

  @doc """
  Loads a context binary from a file or from memory.

  `source` is `{:file, path}`, `{:binary, bytes}`, or a bare string: a path when it is short
  printable text without NUL bytes, the model's bytes otherwise. The context keeps the binary
  for its whole life (QNN reads it, and recreates the context from it after a DSP restart): a
  file is mapped where it cannot change while loaded (a read-only file system such as the
  Nerves root file system, a sealed memfd) and copied elsewhere (on `/data` a file may be
  rewritten under the model); `{:binary, bytes}` is referenced, not copied (an Erlang binary
  never changes). `load_info/1` says which, and why.

  A file larger than the context-binary limit (1 GiB by default) is refused from its size before
  anything is read, with a `:model` error; `config :hexagon_tpu, max_binary_bytes: bytes` raises
  (or lowers) it for the whole VM, and a FIFO, device or directory is refused at once, never
  waited on.

  ## Options

    * `:priority` - `:low`, `:normal`, `:normal_high` or `:high`: the context's QNN priority
      config where the backend announces priority control (`HexagonTpu.Runtime.info/1`'s
      `:priority_control`), and the default place of its graphs' calls in their queues
    * `:timeout` - milliseconds (a positive integer, or `:infinity`: 24 h): bounds the load
      where the backend announces loads with signals (`:load_signals`: a load past it returns
      a `:timeout` error naming the binary and the limit; elsewhere it runs to its end), and
      is the default deadline of the context's executes
    * `:queue_limit` - how many calls may wait for one of the context's graphs (a positive
      integer); one more is refused with a `:busy` error naming this option. `nil` (default):
      no limit but memory, so callers wait their turn (each waiting call holds its inputs)
    * `:graph` - for an ONNX EPContext model holding several context binaries: load the one
      holding this graph (a `:not_found` error listing each context's graphs when none does).
      Without it, the one holding the first of `:graphs`; without either, such a model is an
      `:invalid_argument` error listing them
    * `:graphs` - the names of the graphs to load (a non-empty list of strings): only these
      are deserialized where the backend announces it (`Runtime.info/1`'s `:enable_graphs`),
      and opening another is a `:not_found` error naming this option. `nil` (default): all

  `:graph` and `:graphs` combine: `:graph` chooses the context binary, `:graphs` which of its
  graphs are loaded, so `:graph` must be one of `:graphs` (else an `:invalid_option` error).
  One load takes one context binary: a graph of `:graphs` that another context of the model
  holds is a `:not_found` error naming the context holding it and each context's graphs; load
  each context on its own (one `load/3` per context, or `HexagonTpu.load_models/2`).
    * `:memory_limit_mb` - QNN's memory-limit hint for the context, in MB (a positive
      integer up to 2^44 - 1: in bytes it fits QNN's 64 bits), where the backend announces it
      (`:memory_limit_hint`); `nil` (default): none
    * `:mapping` - `:auto` (default: a file is mapped where it cannot change, else copied) or
      `:copy` (always copied)

  Besides a raw context binary, `source` may be an ONNX model whose EPContext nodes carry the
  binary (what Ultralytics' `format="qnn"` export and ONNX Runtime's QNN execution provider
  write), recognised by its content: `info/1`'s `:source` then describes the ONNX file. An
  external binary (`embed_mode` 0) is read from the model's folder, so such a model loads from
  a path only. An ONNX model without an EPContext node (a QDQ model) is an `:unsupported`
  error saying how to compile one ([docs/context-binaries.md](docs/context-binaries.md)).

  An unknown option is an `:invalid_option` error.

  ## Examples

      iex> {:ok, rt} = HexagonTpu.Runtime.open(backend: :reference)
      iex> {:ok, ctx} = HexagonTpu.Context.load(rt, "add.bin")
      iex> HexagonTpu.Context.graph_names(ctx)
      ["add_f32", "scale_u8"]
      iex> {:ok, _} = HexagonTpu.Context.load(rt, {:binary, File.read!("add.bin")})
      iex> {:error, error} = HexagonTpu.Context.load(rt, "missing.bin")
      iex> {error.reason, error.message}
      {:io, "cannot open 'missing.bin': No such file or directory"}
      iex> HexagonTpu.Runtime.close(rt)
      :ok
  """
  @spec load(Runtime.t(), source(), keyword()) :: {:ok, t()} | {:error, Error.t()}
  def load(runtime, source, opts \\ [])

  def load(%Runtime{ref: rt}, source, opts) do
    where = "HexagonTpu.Context.load/3"

    with {:ok, o} <- Options.validate(opts, load_spec(), where),
         :ok <- graph_among_graphs(o, where),
         {:ok, src} <- classify(source),
         :ok <- apply_max_binary_bytes(),
         {:ok, ref, info} <- Error.wrap(open_nif(rt, src, load_options(o))) do
      {:ok, from_nif(ref, info)}
    end
  end

  def load(other, _source, _opts),
    do:
      {:error,
       Error.new(:invalid_argument, "expected a %HexagonTpu.Runtime{}, got #{inspect(other)}")}

  @doc """
  Like `load/3`, raising `HexagonTpu.Error`.

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> ctx = HexagonTpu.Context.load!(rt, "add.bin")
      iex> HexagonTpu.Context.info(ctx).build_id
      "htpu-ref"
      iex> HexagonTpu.Context.load!(rt, {:binary, "not a model"})
      ** (HexagonTpu.Error) model: reading the binary's metadata: systemContextGetBinaryInfo failed with QNN error 30010 (QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY: malformed context binary); is this a QNN context binary for this SDK? (a 11-byte buffer)
  """
  @spec load!(Runtime.t(), source(), keyword()) :: t()
  def load!(runtime, source, opts \\ []), do: Error.unwrap!(load(runtime, source, opts))

  @doc """
  The graphs of the context with their tensor infos, in the binary's order.

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> [add, scale] = HexagonTpu.Context.graphs(HexagonTpu.Context.load!(rt, "add.bin"))
      iex> {add.name, Enum.map(add.inputs, & &1.name), Enum.map(add.outputs, & &1.name)}
      {"add_f32", ["a", "b"], ["y"]}
      iex> [x] = scale.inputs
      iex> {x.type, x.shape, x.quantization.zero_point}
      {{:u, 8}, {1, 4}, 128}
  """
  @spec graphs(t()) :: [graph_summary()]
  def graphs(%__MODULE__{graphs: graphs}), do: graphs

  @doc """
  The names of the context's graphs.

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> HexagonTpu.Context.graph_names(HexagonTpu.Context.load!(rt, "add.bin"))
      ["add_f32", "scale_u8"]
  """
  @spec graph_names(t()) :: [String.t()]
  def graph_names(%__MODULE__{graphs: graphs}), do: Enum.map(graphs, & &1.name)

  @doc """
  What the binary says about itself: `:build_id`, `:soc_version`, `:dsp_arch`,
  `:core_api_version`, `:backend_api_version`, `:context_blob_size`, ... (read at load).

  `:binary_bytes` is the binary's size and `:load_estimate_bytes` what loading it is expected
  to cost the host: the binary kept for recovery, the largest spill-fill buffer, each graph's
  I/O, op data, constants and DDR tensors, from the HTP graph blob info each graph carries
  (`graphs/1`'s `:memory`: `:blob_info_version` 1 gives `:spill_fill_bytes`, 2 the sizes,
  the other version's figures `nil`;
  [docs/board.md](docs/board.md), "Memory").

  `:source` is `nil` for a raw context binary; for an ONNX EPContext model a map of the file's
  facts: `:format` (`"onnx-epcontext"`), `:ir_version`, `:opset`, `:producer_name`,
  `:producer_version`, `:metadata` (its `metadata_props` as a map of strings),
  `:class_names` (Ultralytics' `names` entry `{0: 'person', ...}` as a list, the index being
  the class id; `nil` when absent or in another form), `:nodes` (each EPContext node:
  `:name`, `:main_context`, `:embed_mode`, `:cache_file`, `:cache_bytes`, `:partition_name`,
  `:ep_sdk_version`, `:source`, `:max_size`, `:context`), `:contexts` (how many binaries the
  model holds), `:context` (the one loaded) and `:origin` (where its bytes came from).

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> info = HexagonTpu.Context.info(HexagonTpu.Context.load!(rt, "add.bin"))
      iex> {info.dsp_arch, info.soc_version, info.backend_api_version}
      {68, "v68", {5, 42, 0}}
  """
  @spec info(t()) :: map()
  def info(%__MODULE__{info: info}), do: info

  @doc """
  How the context holds its binary and what its load gave QNN, read now:

    * `:binary` - `:mapped`, `:copied` or `:lent` (a `{:binary, bytes}` source, referenced),
      and `:binary_note`, why (`"mapped: squashfs has no write support, ..."`);
      `:binary_bytes`, `:binary_copy_bytes` (0 unless copied)
    * `:persistent_binary` - QNN was told the binary stays (it then needs no copy of its own)
    * `:graphs_enabled` - graphs that may be opened; `:enable_graphs_passed`: only they were
      deserialized (the `:graphs` option, where the backend announces it)
    * `:memory_limit_mb`, `:memory_limit_passed` - the hint, and whether QNN got it
    * `:spill_fill_bytes` - what its graphs need (the largest enabled graph's, from the
      binary's graph blob info: each graph's `:memory` in `graphs/1`);
      `:spill_fill_group` (nil: none) and `:spill_fill_group_bytes` - the buffer it shares with
      the runtime's other contexts; `:spill_fill_note` - why it shares none
    * `:list_loaded` - it came up through one list call with others (`HexagonTpu.load_models/2`)
    * `:load_ns` - the load's own time

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> ctx = HexagonTpu.Context.load!(rt, {:binary, File.read!("add.bin")}, graphs: ["add_f32"])
      iex> {:ok, info} = HexagonTpu.Context.load_info(ctx)
      iex> {info.binary, info.graphs_enabled, info.enable_graphs_passed, info.persistent_binary}
      {:lent, 1, true, true}
  """
  @spec load_info(t()) :: {:ok, map()} | {:error, Error.t()}
  def load_info(%__MODULE__{ref: ref}), do: Error.wrap(NIF.context_load_info(ref))

  @doc """
  What the loaded context holds in memory, as the backend answers it: `:reported` (whether the
  backend announces HTP's context properties; no HTP release observed so far does), then
  `:weights_bytes` (the persistent weights buffer), `:spill_fill_bytes` (the largest spill-fill
  buffer of its graphs) and `:buffer_alignment` (each `nil` when not reported, with the reason
  in `:note`), and `:binary_bytes` (the binary the context keeps for recovery: mapped, copied
  or lent, `load_info/1`). What the binary itself says is in `info/1`: `:load_estimate_bytes`, and each graph's
  `:memory` in `graphs/1` ([docs/board.md](docs/board.md), "Memory").

  ## Examples

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> {:ok, memory} = HexagonTpu.Context.memory(HexagonTpu.Context.load!(rt, "add.bin"))
      iex> {memory.reported, memory.weights_bytes, memory.binary_bytes > 0}
      {false, nil, true}
  """
  @spec memory(t()) :: {:ok, map()} | {:error, Error.t()}
  def memory(%__MODULE__{ref: ref}), do: Error.wrap(NIF.context_memory(ref))

  @doc """
  Drops this handle's reference; the QNN context is freed when its last graph is closed too.
  Idempotent; later use of the handle gives a `:closed` error.

  ## Examples

  A graph keeps its context: closing the context first leaves the graph working.

      iex> rt = HexagonTpu.Runtime.open!(backend: :reference)
      iex> ctx = HexagonTpu.Context.load!(rt, "add.bin")
      iex> graph = HexagonTpu.Graph.open!(ctx, graph: "add_f32")
      iex> HexagonTpu.Context.close(ctx)
      :ok
      iex> {:ok, [_]} = HexagonTpu.Graph.execute(graph, [<<0::128>>, <<0::128>>], output: :binary)
      iex> {:error, error} = HexagonTpu.Graph.open(ctx, graph: "add_f32")
      iex> error.reason
      :closed
  """
  @spec close(t()) :: :ok
  def close(%__MODULE__{ref: ref}), do: NIF.context_close(ref)

  # The core's limit is process-wide and C reads no Elixir environment (System.put_env never
  # reaches getenv): the application's setting is handed over before each load. The core takes
  # a uint64_t, 0 meaning its default: so 1..2^64-1 here.
  @max_uint64 18_446_744_073_709_551_615

  defp apply_max_binary_bytes do
    case Application.get_env(:hexagon_tpu, :max_binary_bytes) do
      nil ->
        :ok

      n when is_integer(n) and n > 0 and n <= @max_uint64 ->
        Error.wrap(NIF.set_max_binary_bytes(n))

      other ->
        {:error,
         Error.new(
           :invalid_option,
           "expected the :hexagon_tpu application's :max_binary_bytes to be an integer in " <>
             "1..#{@max_uint64} (bytes), got #{inspect(other)}"
         )}
    end
  end

  @doc false
  def valid_queue_limit?(v), do: v == nil or (is_integer(v) and v > 0 and v <= 0xFFFF_FFFF)

  @doc false
  # The options of a load (this module's load/3, HexagonTpu.load_model/2 and load_models/2).
  def load_spec do
    %{
      timeout: {&CallOptions.check_timeout/1, "", nil},
      priority: {{:one_of, CallOptions.priorities()}, CallOptions.priorities_expected(), nil},
      queue_limit: {&valid_queue_limit?/1, @queue_limit_expected, nil},
      graph: {:string_or_nil, "a graph name (a string without NUL bytes) or nil", nil},
      graphs:
        {&valid_graphs?/1, "a non-empty list of graph names (strings without NUL bytes) or nil",
         nil},
      memory_limit_mb:
        {&valid_memory_limit?/1, "a positive integer (MB) up to 2^44 - 1 or nil", nil},
      mapping: {{:one_of, [:auto, :copy]}, ":auto or :copy", :auto}
    }
  end

  # :graph picks the context binary, :graphs what of it loads: a graph that picks the binary
  # but is not loaded from it is a contradiction, not a choice.
  defp graph_among_graphs(%{graph: graph, graphs: [_ | _] = graphs}, where)
       when is_binary(graph) do
    if graph in graphs,
      do: :ok,
      else:
        {:error,
         Error.new(
           :invalid_option,
           "#{where}: expected :graph (#{inspect(graph)}, which chooses the context binary) " <>
             "to be one of :graphs (the graphs loaded from it), got #{inspect(graphs)}; " <>
             "one load takes one context binary"
         )}
  end

  defp graph_among_graphs(_o, _where), do: :ok

  defp valid_graphs?(nil), do: true

  defp valid_graphs?(names) when is_list(names) and names != [],
    do: Enum.all?(names, &(is_binary(&1) and &1 != "" and not String.contains?(&1, <<0>>)))

  defp valid_graphs?(_), do: false

  # QNN's hint is MB in 64 bits, weighed against byte counts: the C core's
  # HTPU_MAX_MEMORY_LIMIT_MB (2^44 - 1), the largest whose bytes fit 64 bits.
  defp valid_memory_limit?(v),
    do: v == nil or (is_integer(v) and v > 0 and v <= 0xFFF_FFFF_FFFF)

  @doc false
  # The NIF's load options: none (the 2-argument NIFs) when no option is given.
  def load_options(%{
        timeout: nil,
        priority: nil,
        queue_limit: nil,
        graph: nil,
        graphs: nil,
        memory_limit_mb: nil,
        mapping: :auto
      }),
      do: nil

  def load_options(o) do
    ns = CallOptions.timeout_ns(o.timeout)

    %{
      priority: o.priority || :default,
      timeout_ns: ns,
      exec_timeout_ns: ns,
      queue_limit: o.queue_limit || 0,
      graph: o.graph,
      graphs: o.graphs,
      memory_limit_mb: o.memory_limit_mb || 0,
      copy_binary: o.mapping == :copy
    }
  end

  defp open_nif(rt, {:file, path}, nil), do: NIF.context_open_file(rt, path)
  defp open_nif(rt, {:binary, bin}, nil), do: NIF.context_open_binary(rt, bin)
  defp open_nif(rt, {:file, path}, lo), do: NIF.context_open_file(rt, path, lo)
  defp open_nif(rt, {:binary, bin}, lo), do: NIF.context_open_binary(rt, bin, lo)

  @doc false
  def classify_source(source), do: classify(source)

  @doc false
  def check_max_binary_bytes, do: apply_max_binary_bytes()

  defp classify({:file, path}) when is_binary(path) do
    # A C path ends at its first NUL: "a\0b" would open "a". Refused instead of truncated.
    if String.contains?(path, <<0>>),
      do:
        {:error,
         Error.new(
           :invalid_argument,
           "expected a path without NUL bytes, got #{inspect(path, limit: 5)}"
         )},
      else: {:ok, {:file, path}}
  end

  defp classify({:binary, <<>>}),
    do:
      {:error,
       Error.new(
         :invalid_argument,
         "the binary is empty ({:binary, \"\"}); expected the bytes of a QNN context binary"
       )}

  defp classify({:binary, bin}) when is_binary(bin), do: {:ok, {:binary, bin}}

  defp classify(source) when is_binary(source) do
    if path?(source),
      do: classify({:file, source}),
      else: classify({:binary, source})
  end

  defp classify(other) do
    {:error,
     Error.new(
       :invalid_argument,
       "expected a path, {:file, path} or {:binary, bytes}, got #{inspect(other, limit: 5)}"
     )}
  end

  defp path?(s),
    do: byte_size(s) < @max_path and String.printable?(s) and not String.contains?(s, <<0>>)

  @doc false
  def from_nif(ref, info) do
    graphs =
      Enum.zip_with(info.graphs, info.graph_memory, fn g, memory ->
        %{
          name: g.name,
          inputs: Enum.map(g.inputs, &TensorInfo.from_nif/1),
          outputs: Enum.map(g.outputs, &TensorInfo.from_nif/1),
          vtcm_bytes: g.vtcm_bytes,
          memory: memory
        }
      end)

    info = info |> Map.delete(:graph_memory) |> Map.put(:graphs, graphs)
    %__MODULE__{ref: ref, info: info, graphs: graphs}
  end
end
