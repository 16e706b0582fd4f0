defmodule Platform.Parsing.Behaviour do
  @moduledoc """
  What `use Platform.Parsing.Behaviour` gives a parser (see parser-contract.md): `get/2,3`,
  `get_last_reading/2`, `json_decode/1`, and overridable `fields/0`, `tests/0`, `preloads/0`.
  """

  @callback parse(payload :: any, meta :: map) :: any
  @callback fields() :: list
  @callback tests() :: list

  defmacro __using__(_opts) do
    quote do
      @behaviour Platform.Parsing.Behaviour
      require Logger

      def fields(), do: []
      def tests(), do: []
      def preloads(), do: []
      defoverridable fields: 0, tests: 0, preloads: 0

      def get(meta, path, default \\ nil), do: Platform.Parsing.Behaviour.get(meta, path, default)
      def get_last_reading(meta, query), do: Platform.Parsing.Behaviour.get_last_reading(meta, query)
      def json_decode(text), do: Fieldline.Json.platform_decode(text)
    end
  end

  @doc "Safe nested lookup: atom steps try the atom key, then the same name as a string key."
  def get(data, path, default \\ nil)
  def get(data, path, default) when not is_list(path), do: get(data, [path], default)
  def get(nil, _, default), do: default
  def get(data, [], _default), do: data

  def get(data, [step | rest], default) do
    case step(data, step) do
      {:ok, value} -> if rest == [], do: value_or(value, default), else: get(value, rest, default)
      :error -> default
    end
  end

  defp value_or(nil, default), do: default
  defp value_or(value, _), do: value

  defp step(%{} = map, key) when is_atom(key) do
    case Map.fetch(map, key) do
      {:ok, _} = hit -> hit
      :error -> Map.fetch(map, Atom.to_string(key))
    end
  end

  defp step(%{} = map, key), do: Map.fetch(map, key)

  defp step(list, index) when is_list(list) and is_integer(index) do
    case Enum.fetch(list, index) do
      {:ok, _} = hit -> hit
      :error -> :error
    end
  end

  defp step(tuple, index) when is_tuple(tuple) and is_integer(index) and index >= 0 do
    if index < tuple_size(tuple), do: {:ok, elem(tuple, index)}, else: :error
  end

  defp step(_, _), do: :error

  @doc """
  The device's newest stored reading matching `query` as `%{data: map, measured_at: DateTime}`, or nil.
  `[]` matches any reading; `[field: value]` matches readings whose data has that value, `:_` any value.
  Test vectors supply `_last_reading` / `_last_reading_map` in meta; at run time the worker provides
  the device's recent readings and those produced earlier in the same batch.
  """
  def get_last_reading(meta, query) do
    cond do
      is_map(meta) and Map.has_key?(meta, :_last_reading_map) ->
        Map.get(meta[:_last_reading_map], query)

      is_map(meta) and Map.has_key?(meta, :_last_reading) ->
        meta[:_last_reading]

      true ->
        Process.get(:fieldline_last_readings, [])
        |> Enum.find(fn reading -> matches?(reading, query) end)
    end
  end

  defp matches?(_reading, []), do: true

  defp matches?(%{data: data}, query) when is_list(query) do
    Enum.all?(query, fn {field, wanted} ->
      case get(data, [field], :__fieldline_missing__) do
        :__fieldline_missing__ -> false
        _value when wanted == :_ -> true
        value -> value == wanted
      end
    end)
  end

  defp matches?(_, _), do: false
end
