defmodule Parser do
  use Platform.Parsing.Behaviour

  # A common temperature/humidity sensor frame on port 1:
  #   int16 temperature in 0.01 °C | uint16 humidity in 0.01 % | uint16 battery in mV
  # Port 2 carries a status frame: uint8 firmware major, uint8 minor, uint16 reporting interval (s).

  def parse(<<t::signed-16, h::16, battery::16>>, %{meta: %{frame_port: 1}}) do
    %{temperature: t / 100, humidity: h / 100, battery_voltage: battery / 1000}
  end

  def parse(<<major, minor, interval::16>>, %{meta: %{frame_port: 2}}) do
    %{firmware: "#{major}.#{minor}", reporting_interval: interval}
  end

  def parse(payload, meta) when is_binary(payload) do
    Logger.warn("unexpected frame on port #{inspect(get(meta, [:meta, :frame_port]))}: #{Base.encode16(payload)}")
    []
  end

  def parse(_payload, _meta), do: []

  def fields do
    [%{"field" => "temperature", "display" => "Temperature", "unit" => "°C"},
     %{"field" => "humidity", "display" => "Humidity", "unit" => "%"},
     %{"field" => "battery_voltage", "display" => "Battery", "unit" => "V"}]
  end

  def tests do
    [
      {:parse_hex, "08 FC 17 70 0B B8", %{meta: %{frame_port: 1}}, %{temperature: 23.0, humidity: 60.0, battery_voltage: 3.0}},
      {:parse_hex, "ff 38 0f a0 0c e4", %{meta: %{frame_port: 1}, _comment: "below zero"},
       %{temperature: -2.0, humidity: 40.0, battery_voltage: 3.3}},
      {:parse_hex, "01 04 0E 10", %{meta: %{frame_port: 2}}, %{firmware: "1.4", reporting_interval: 3600}},
      {:parse_hex, "00", %{meta: %{frame_port: 9}, _comment: "unknown port"}, []}
    ]
  end
end
