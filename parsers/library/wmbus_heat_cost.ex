defmodule Parser do
  use Platform.Parsing.Behaviour

  # Heat cost allocator (radiator sensor): uint8 version, uint32 little-endian current consumption
  # units, uint32 little-endian units at the last billing date, and the billing date as
  # uint16 little-endian packed date (day 5 bits, month 4 bits, year-2000 7 bits).

  import Bitwise

  def parse(<<1, current::little-32, billed::little-32, packed::little-16>>, _meta) do
    day = packed &&& 0x1F
    month = packed >>> 5 &&& 0x0F
    year = 2000 + (packed >>> 9 &&& 0x7F)

    %{
      current_units: current,
      billing_units: billed,
      since_billing: current - billed,
      billing_date: Date.to_iso8601(Date.new!(year, month, day))
    }
  end

  def parse(<<version, _::binary>>, _meta) when version != 1 do
    Logger.warn("unsupported frame version #{version}")
    []
  end

  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "01 E8030000 C8000000 3F30", %{},
       %{current_units: 1000, billing_units: 200, since_billing: 800, billing_date: "2024-01-31"}},
      {:parse_hex, "02 00", %{_comment: "future version"}, []}
    ]
  end
end
