defmodule Fieldline.Preloads do
  @moduledoc """
  `meta.device` for parsers whose `preloads/0` asks for it (parser-contract.md, The meta argument).
  The host sends the device with a parse request only when the parser's source mentions `preloads`;
  the worker puts it into each packet's meta as `:device`, and `for_parser/2` keeps it only when
  `preloads/0` names `:device`. That call is parser code, so it runs in the packet's own process,
  under the packet's limits, like `parse/2`.
  """

  @doc "The device as a parser sees it: atom keys, `location.coordinates` as `{lon, lat}`, `fields` as sent."
  def device(nil), do: nil

  def device(%{} = doc) do
    Map.new(doc, fn
      {"fields", fields} -> {:fields, fields}
      {"location", location} -> {:location, location(location)}
      {k, v} -> {Fieldline.Worker.meta_key(k), Fieldline.Worker.meta_value(v)}
    end)
  end

  defp location(%{"type" => type, "coordinates" => [lon, lat]}), do: %{type: type, coordinates: {lon, lat}}
  defp location(_), do: nil

  @doc "`meta` without `:device` unless the parser's `preloads/0` asks for it."
  def for_parser(module, %{device: _} = meta) do
    if function_exported?(module, :preloads, 0) and asks_for_device?(module.preloads()),
      do: meta,
      else: Map.delete(meta, :device)
  end

  def for_parser(_module, meta), do: meta

  defp asks_for_device?(list) when is_list(list), do: Enum.any?(list, &(&1 == :device or match?({:device, _}, &1)))
  defp asks_for_device?(_), do: false
end
