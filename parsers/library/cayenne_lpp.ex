defmodule Parser do
  use Platform.Parsing.Behaviour

  # Cayenne Low Power Payload: a sequence of (channel, type, value) records.
  # Types: 0 digital in, 1 digital out, 2 analog in, 3 analog out, 101 illuminance, 102 presence,
  # 103 temperature, 104 humidity, 113 accelerometer, 115 barometer, 134 gyrometer, 136 GPS.

  def parse(payload, _meta) when is_binary(payload) do
    case decode(payload, %{}) do
      {:ok, data} when map_size(data) > 0 -> data
      {:ok, _} -> []
      {:error, reason} -> raise ArgumentError, "invalid Cayenne LPP payload: #{reason}"
    end
  end

  def parse(_payload, _meta), do: []

  defp decode(<<>>, acc), do: {:ok, acc}
  defp decode(<<ch, 0, v, rest::binary>>, acc), do: decode(rest, Map.put(acc, "digital_in_#{ch}", v))
  defp decode(<<ch, 1, v, rest::binary>>, acc), do: decode(rest, Map.put(acc, "digital_out_#{ch}", v))
  defp decode(<<ch, 2, v::signed-16, rest::binary>>, acc), do: decode(rest, Map.put(acc, "analog_in_#{ch}", v / 100))
  defp decode(<<ch, 3, v::signed-16, rest::binary>>, acc), do: decode(rest, Map.put(acc, "analog_out_#{ch}", v / 100))
  defp decode(<<ch, 101, v::16, rest::binary>>, acc), do: decode(rest, Map.put(acc, "illuminance_#{ch}", v))
  defp decode(<<ch, 102, v, rest::binary>>, acc), do: decode(rest, Map.put(acc, "presence_#{ch}", v))
  defp decode(<<ch, 103, v::signed-16, rest::binary>>, acc), do: decode(rest, Map.put(acc, "temperature_#{ch}", v / 10))
  defp decode(<<ch, 104, v, rest::binary>>, acc), do: decode(rest, Map.put(acc, "humidity_#{ch}", v / 2))

  defp decode(<<ch, 113, x::signed-16, y::signed-16, z::signed-16, rest::binary>>, acc) do
    decode(rest, Map.put(acc, "accelerometer_#{ch}", %{x: x / 1000, y: y / 1000, z: z / 1000}))
  end

  defp decode(<<ch, 115, v::16, rest::binary>>, acc), do: decode(rest, Map.put(acc, "barometer_#{ch}", v / 10))

  defp decode(<<ch, 134, x::signed-16, y::signed-16, z::signed-16, rest::binary>>, acc) do
    decode(rest, Map.put(acc, "gyrometer_#{ch}", %{x: x / 100, y: y / 100, z: z / 100}))
  end

  defp decode(<<ch, 136, lat::signed-24, lon::signed-24, alt::signed-24, rest::binary>>, acc) do
    decode(rest, Map.put(acc, "gps_#{ch}", %{lat: lat / 10000, lon: lon / 10000, alt: alt / 100}))
  end

  defp decode(<<ch, type, _::binary>>, _acc), do: {:error, "unknown type #{type} on channel #{ch}"}
  defp decode(_, _acc), do: {:error, "truncated record"}

  def fields do
    [%{"field" => "temperature_1", "display" => "Temperature", "unit" => "°C"},
     %{"field" => "humidity_2", "display" => "Humidity", "unit" => "%"}]
  end

  def tests do
    [
      {:parse_hex, "03 67 01 10 05 67 00 FF", %{_comment: "two temperatures"},
       %{"temperature_3" => 27.2, "temperature_5" => 25.5}},
      {:parse_hex, "01 67 FF D7 02 68 50", %{_comment: "negative temperature and humidity"},
       %{"temperature_1" => -4.1, "humidity_2" => 40.0}},
      {:parse_hex, "06 71 04 D2 FB 2E 00 00", %{_comment: "accelerometer"},
       %{"accelerometer_6" => %{x: 1.234, y: -1.234, z: 0.0}}},
      {:parse_hex, "01 88 06 76 5f f2 96 0a 00 03 e8", %{_comment: "gps"},
       %{"gps_1" => %{lat: 42.3519, lon: -87.9094, alt: 10.0}}},
      {:parse_hex, "", %{_comment: "empty payload"}, []}
    ]
  end
end
