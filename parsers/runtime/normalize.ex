defmodule Fieldline.Normalize do
  @moduledoc """
  Turns what `parse/2` returned into readings with JSON-safe data (parser-contract.md, Return values),
  each `{data, measured_at, location, fields}` (a tuple: it crosses the pipe on every packet, and a
  tuple costs less than a map to build, encode and decode):
  `[]`, `nil`, `%{}` → none; a map → one; a list → several; `{map, opts}` carries `measured_at`,
  `location` and `fields`. Atoms become strings, dates ISO 8601 strings, tuples lists; binaries that
  are not UTF-8 become uppercase hex. Anything else is an error naming what was wrong.
  """

  @max_readings 1000
  @max_depth 64

  def readings(result) do
    try do
      list =
        case result do
          nil -> []
          [] -> []
          map when is_map(map) and map_size(map) == 0 and not is_struct(map) -> []
          list when is_list(list) -> list
          other -> [other]
        end

      if length(list) > @max_readings, do: throw({:bad, "more than #{@max_readings} readings from one packet"})

      readings =
        list
        |> Enum.reject(fn r -> r == nil or (is_map(r) and not is_struct(r) and map_size(r) == 0) end)
        |> Enum.map(&reading/1)

      {:ok, readings}
    catch
      {:bad, message} -> {:error, message}
    end
  end

  defp reading({%{} = data, opts}) when is_list(opts) and not is_struct(data) do
    Enum.reduce(opts, {json_object(data), nil, nil, nil}, fn
      {:measured_at, value}, acc -> put_elem(acc, 1, timestamp(value))
      {:location, value}, acc -> put_elem(acc, 2, location(value))
      {:fields, value}, acc -> put_elem(acc, 3, fields(value))
      {key, _}, _ -> throw({:bad, "unknown reading option #{inspect(key)}"})
      other, _ -> throw({:bad, "reading options must be a keyword list, got #{short(other)}"})
    end)
  end

  defp reading(%{} = data) when not is_struct(data), do: {json_object(data), nil, nil, nil}

  defp reading(other), do: throw({:bad, "bad return value: expected a map, a list or {map, opts}, got #{short(other)}"})

  defp timestamp(%DateTime{} = dt), do: DateTime.to_unix(dt, :microsecond)

  defp timestamp(%NaiveDateTime{} = ndt),
    do: ndt |> DateTime.from_naive!("Etc/UTC") |> DateTime.to_unix(:microsecond)

  defp timestamp(other), do: throw({:bad, "measured_at must be a DateTime, got #{short(other)}"})

  defp location({lon, lat}) when is_number(lon) and is_number(lat), do: [lon, lat]
  defp location([lon, lat]) when is_number(lon) and is_number(lat), do: [lon, lat]
  defp location(nil), do: nil
  defp location(other), do: throw({:bad, "location must be {lon, lat} or [lon, lat], got #{short(other)}"})

  defp fields(%{} = map) do
    Map.new(map, fn {profile, values} ->
      unless is_map(values), do: throw({:bad, "fields must map profile slugs to maps"})
      {key(profile), json_object(values)}
    end)
  end

  defp fields(other), do: throw({:bad, "fields must be a map, got #{short(other)}"})

  defp json_object(map), do: json(map, 0)

  @doc "A term as JSON-safe data (maps with string keys)."
  def json(_, depth) when depth > @max_depth, do: throw({:bad, "reading data nested deeper than #{@max_depth}"})
  def json(%DateTime{} = v, _), do: DateTime.to_iso8601(v)
  def json(%NaiveDateTime{} = v, _), do: NaiveDateTime.to_iso8601(v)
  def json(%Date{} = v, _), do: Date.to_iso8601(v)
  def json(%Time{} = v, _), do: Time.to_iso8601(v)
  def json(%_{} = struct, depth), do: json(Map.from_struct(struct), depth)
  def json(%{} = map, depth), do: Map.new(map, fn {k, v} -> {key(k), json(v, depth + 1)} end)
  def json(list, depth) when is_list(list), do: Enum.map(list, &json(&1, depth + 1))
  def json(tuple, depth) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> json(depth)
  def json(v, _) when is_boolean(v) or is_nil(v) or is_number(v), do: v
  def json(v, _) when is_atom(v), do: Atom.to_string(v)
  def json(v, _) when is_binary(v), do: if(String.valid?(v), do: v, else: Base.encode16(v))
  def json(v, _), do: throw({:bad, "cannot store #{short(v)} in a reading"})

  defp key(k) when is_binary(k), do: if(String.valid?(k), do: k, else: Base.encode16(k))
  defp key(k) when is_atom(k), do: Atom.to_string(k)
  defp key(k) when is_integer(k) or is_float(k), do: to_string(k)
  defp key(k), do: throw({:bad, "map key #{short(k)} cannot be a JSON key"})

  defp short(term), do: inspect(term, limit: 5, printable_limit: 60)
end
