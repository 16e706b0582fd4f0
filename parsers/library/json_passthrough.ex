defmodule Parser do
  use Platform.Parsing.Behaviour

  # Devices that already send JSON: a JSON object becomes the reading as it is. UTF-8 payloads are
  # decoded as JSON first. A `timestamp` (ISO 8601) in the object becomes the reading's measured_at.

  def parse(%{} = object, _meta) when map_size(object) > 0, do: with_time(object)

  def parse(text, %{payload_encoding: "utf8"}) when is_binary(text) do
    case json_decode(text) do
      {:ok, %{} = object} -> parse(object, %{})
      {:ok, _other} -> []
      {:error, reason} -> raise ArgumentError, "payload is not JSON: #{inspect(reason)}"
    end
  end

  def parse(_payload, _meta), do: []

  defp with_time(%{"timestamp" => ts} = object) when is_binary(ts) do
    case DateTime.from_iso8601(ts) do
      {:ok, dt, _offset} -> {Map.delete(object, "timestamp"), measured_at: dt}
      _ -> object
    end
  end

  defp with_time(object), do: object

  def tests do
    [
      {:parse_json, ~s({"temperature": 21.5, "door": "open"}), %{}, %{"temperature" => 21.5, "door" => "open"}},
      {:parse_json, ~s({"level": 3, "timestamp": "2024-05-01T12:00:00Z"}), %{_comment: "device time"},
       {%{"level" => 3}, measured_at: ~U[2024-05-01 12:00:00Z]}},
      {:parse, ~s({"co2": 415}), %{payload_encoding: "utf8"}, %{"co2" => 415}},
      {:parse_json, "[1, 2, 3]", %{_comment: "not an object"}, []}
    ]
  end
end
