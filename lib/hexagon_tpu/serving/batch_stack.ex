defmodule HexagonTpu.Serving.BatchStack do
  @moduledoc false
  # The one place that reads Nx.Batch's private layout.
  #
  # Traversing an Nx.Batch (Nx.LazyContainer) concatenates its requests with Nx.concatenate/2,
  # whose checks cost about 1 us per request on the binary backend (~40 us for a batch of 32
  # rows): as much again as the rest of a batch's work besides the executes. The serving's
  # requests are already checked in their callers (HexagonTpu.Serving's preprocess: shape and
  # type of every input), so their bytes can be joined as they are, if the batch's requests
  # can be read one by one.
  #
  # Nx.Batch 0.7 keeps them in `stack`, newest first, each as `{funs, rows}` with one function
  # per tensor of the request's container, in reverse container order (Nx.Batch prepends while
  # it traverses the container). Which order the functions are in is not guessed: layout/0
  # finds it once, on two tensors that cannot be confused, and anything unexpected (another
  # layout in another Nx version, padding) makes requests/3 answer :error, and the caller then
  # traverses the batch through Nx's public protocol instead. test/hexagon_tpu/
  # serving_batch_stack_test.exs checks both against the traversal.

  @compile {:no_warn_undefined, [Nx, Nx.Batch, Nx.LazyContainer, Nx.Defn.Composite]}

  @typedoc "How a stack entry's functions are ordered against the request's container."
  @type layout :: :reversed | :in_order | :unknown

  @doc false
  # This Nx's layout, found once per VM (the Nx loaded does not change while it runs).
  @spec layout() :: layout()
  def layout do
    key = {__MODULE__, :layout}

    case :persistent_term.get(key, nil) do
      nil ->
        found = probe()
        :persistent_term.put(key, found)
        found

      found ->
        found
    end
  end

  @doc false
  @spec probe() :: layout()
  def probe do
    first = Nx.tensor([[1]], type: {:s, 32})
    second = Nx.tensor([[2]], type: {:s, 32})

    case Nx.Batch.concatenate([{first, second}]) do
      %{stack: [{[f, g], 1}], pad: 0} when is_function(f, 0) and is_function(g, 0) ->
        case {Nx.to_flat_list(f.()), Nx.to_flat_list(g.())} do
          {[2], [1]} -> :reversed
          {[1], [2]} -> :in_order
          _ -> :unknown
        end

      _ ->
        :unknown
    end
  rescue
    _ -> :unknown
  end

  @doc """
  The batch's requests in row order, each `{tensors, rows}` with the request's `count`
  tensors in container order, or `:error` when the batch cannot be read that way.
  """
  @spec requests(struct(), pos_integer(), layout()) ::
          {:ok, [{[struct()], pos_integer()}]} | :error
  def requests(%{stack: [_ | _] = stack, pad: 0}, count, layout)
      when layout in [:reversed, :in_order] do
    walk(stack, count, layout, [])
  end

  def requests(_batch, _count, _layout), do: :error

  # Newest first: prepending while walking gives the requests in row order.
  defp walk([{funs, rows} | rest], count, layout, acc)
       when is_list(funs) and length(funs) == count and is_integer(rows) and rows > 0 do
    funs = if layout == :reversed, do: Enum.reverse(funs), else: funs

    case tensors(funs, rows, []) do
      {:ok, tensors} -> walk(rest, count, layout, [{tensors, rows} | acc])
      :error -> :error
    end
  end

  defp walk([], _count, _layout, acc), do: {:ok, acc}
  defp walk(_other, _count, _layout, _acc), do: :error

  defp tensors([fun | funs], rows, acc) when is_function(fun, 0) do
    case fun.() do
      %{__struct__: Nx.Tensor, shape: shape, vectorized_axes: []} = t
      when tuple_size(shape) > 0 and elem(shape, 0) == rows ->
        tensors(funs, rows, [t | acc])

      _ ->
        :error
    end
  end

  defp tensors([], _rows, acc), do: {:ok, Enum.reverse(acc)}
  defp tensors(_funs, _rows, _acc), do: :error

  @doc """
  The batch's tensors through Nx's public traversal, one per tensor of the requests'
  container, in container order (each the concatenation of every request's rows, padded).
  """
  @spec traverse(struct()) :: [struct()]
  def traverse(batch) do
    {_template, acc} =
      Nx.LazyContainer.traverse(batch, [], fn template, fun, acc -> {template, [fun.() | acc]} end)

    Enum.reverse(acc)
  end

  @doc """
  What a caller's batch holds, through Nx's public traversal: its entries' container (a
  tensor, a tuple, a map, ...) with each tensor the rows of every entry, the padding dropped.
  """
  @spec contents(struct()) :: term()
  def contents(%{size: size, pad: pad} = batch) do
    {container, nil} =
      Nx.LazyContainer.traverse(batch, nil, fn _template, fun, nil ->
        t = fun.()
        {if(pad == 0, do: t, else: Nx.slice_along_axis(t, 0, size, axis: 0)), nil}
      end)

    container
  end

  @doc """
  `container` (as contents/1 returns it) with rows `start..start + n - 1` of each tensor, as a
  batch of one entry: the same request form, fewer rows.
  """
  @spec rows(term(), non_neg_integer(), pos_integer()) :: struct()
  def rows(container, start, n) do
    piece = Nx.Defn.Composite.traverse(container, &Nx.slice_along_axis(&1, start, n, axis: 0))
    Nx.Batch.concatenate([piece])
  end
end
