defmodule Parser do
  use Platform.Parsing.Behaviour

  # Soil probe: uint16 volumetric water content in 0.01 %, int16 soil temperature in 0.01 °C,
  # uint16 electrical conductivity in µS/cm. Readings are converted to local time for the
  # irrigation schedule the device reports in `meta.meta.zone` (an IANA name, default Europe/Berlin).

  def parse(<<vwc::16, t::signed-16, ec::16>>, meta) do
    zone = get(meta, [:meta, :zone], "Europe/Berlin")
    local = Timex.to_datetime(meta.transceived_at, zone)

    %{
      water_content: vwc / 100,
      soil_temperature: t / 100,
      conductivity: ec,
      local_hour: local.hour,
      irrigate: vwc < 2000
    }
  end

  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "0BB8 0834 01F4", %{transceived_at: ~U[2024-07-01 04:00:00Z], meta: %{}},
       %{water_content: 30.0, soil_temperature: 21.0, conductivity: 500, local_hour: 6, irrigate: false}},
      {:parse_hex, "05dc 03e8 0064",
       %{transceived_at: ~U[2024-01-15 12:00:00Z], meta: %{zone: "America/New_York"}, _comment: "dry, in winter, New York"},
       %{water_content: 15.0, soil_temperature: 10.0, conductivity: 100, local_hour: 7, irrigate: true}}
    ]
  end
end
