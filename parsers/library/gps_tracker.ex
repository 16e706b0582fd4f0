defmodule Parser do
  use Platform.Parsing.Behaviour

  # GPS tracker: int32 latitude and longitude in 1e-7 degrees, int16 altitude in m, uint8 satellites,
  # uint8 battery %. The position becomes the reading's location (GeoJSON, longitude first).
  # A frame without a fix (satellites = 0) only reports the battery.

  def parse(<<_lat::signed-32, _lon::signed-32, _alt::signed-16, 0, battery>>, _meta) do
    %{fix: false, battery: battery}
  end

  def parse(<<lat::signed-32, lon::signed-32, alt::signed-16, sats, battery>>, _meta) do
    lat = lat / 10_000_000
    lon = lon / 10_000_000
    {%{fix: true, latitude: lat, longitude: lon, altitude: alt, satellites: sats, battery: battery}, location: {lon, lat}}
  end

  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "1F4DED00 07FD6EF0 0022 07 55", %{},
       {%{fix: true, latitude: 52.520064, longitude: 13.404952, altitude: 34, satellites: 7, battery: 85},
        location: {13.404952, 52.520064}}},
      {:parse_hex, "00000000 00000000 0000 00 10", %{_comment: "no fix"}, %{fix: false, battery: 16}}
    ]
  end
end
