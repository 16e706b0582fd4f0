defmodule Parser do
  use Platform.Parsing.Behaviour

  # Indoor air quality: uint16 CO2 ppm, int16 temperature 0.1 °C, uint8 humidity %, uint16 VOC index.
  # CO2 above 1400 ppm is flagged for ventilation.

  def parse(<<co2::16, t::signed-16, humidity, voc::16>>, _meta) do
    %{co2: co2, temperature: t / 10, humidity: humidity, voc_index: voc, ventilate: co2 > 1400}
  end

  def parse(_payload, _meta), do: []

  def fields do
    [%{"field" => "co2", "display" => "CO₂", "unit" => "ppm"}]
  end

  def tests do
    [
      {:parse_hex, "01 A4 00 D7 2D 00 64", %{}, %{co2: 420, temperature: 21.5, humidity: 45, voc_index: 100, ventilate: false}},
      {:parse_hex, "07D0 00C8 32 012C", %{_comment: "stuffy room"},
       %{co2: 2000, temperature: 20.0, humidity: 50, voc_index: 300, ventilate: true}}
    ]
  end
end
