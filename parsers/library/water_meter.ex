defmodule Parser do
  use Platform.Parsing.Behaviour

  # Water meter: uint32 little-endian total volume in litres, then a status byte:
  #   bit 0 leak, bit 1 burst, bit 2 backflow, bit 3 low battery.
  # Consumption since the previous reading comes from get_last_reading/2.

  import Bitwise

  def parse(<<volume::little-32, status>>, meta) do
    reading = %{
      volume: volume / 1000,
      leak: (status &&& 1) != 0,
      burst: (status &&& 2) != 0,
      backflow: (status &&& 4) != 0,
      low_battery: (status &&& 8) != 0
    }

    case get_last_reading(meta, volume: :_) do
      %{data: %{"volume" => previous}} -> Map.put(reading, :consumption, round((volume / 1000 - previous) * 1000) / 1000)
      %{data: %{volume: previous}} -> Map.put(reading, :consumption, round((volume / 1000 - previous) * 1000) / 1000)
      _ -> reading
    end
  end

  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "39 30 00 00 00", %{}, %{volume: 12.345, leak: false, burst: false, backflow: false, low_battery: false}},
      {:parse_hex, "10 27 00 00 09", %{_comment: "leak and low battery",
                                      _last_reading: %{data: %{"volume" => 9.5}, measured_at: ~U[2024-01-01 00:00:00Z]}},
       %{volume: 10.0, leak: true, burst: false, backflow: false, low_battery: true, consumption: 0.5}}
    ]
  end
end
