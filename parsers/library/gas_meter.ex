defmodule Parser do
  use Platform.Parsing.Behaviour

  # Gas meter pulse counter: uint32 big-endian counter in 0.01 m³, uint8 battery %, and an optional
  # uint32 unix timestamp of the count (the device's own clock).

  def parse(<<counter::32, battery, time::32>>, _meta) do
    {%{gas_volume: counter / 100, battery: battery}, measured_at: DateTime.from_unix!(time)}
  end

  def parse(<<counter::32, battery>>, _meta), do: %{gas_volume: counter / 100, battery: battery}
  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "00 01 E2 40 5A", %{}, %{gas_volume: 1234.56, battery: 90}},
      {:parse_hex, "00 00 00 64 32 65 92 00 80", %{_comment: "with device time"},
       {%{gas_volume: 1.0, battery: 50}, measured_at: ~U[2024-01-01 00:00:00Z]}}
    ]
  end
end
