defmodule Parser do
  use Platform.Parsing.Behaviour

  # Electricity meter: uint32 unix time of the measurement, uint32 active energy in Wh, int32 power
  # in W, uint16 voltage in 0.1 V. Several 14-byte records may arrive in one frame (buffered while
  # offline): each becomes its own reading at its own time.

  def parse(payload, _meta) when is_binary(payload) and byte_size(payload) > 0 and rem(byte_size(payload), 14) == 0 do
    for <<time::32, energy::32, power::signed-32, voltage::16 <- payload>> do
      {%{energy: energy / 1000, power: power, voltage: voltage / 10}, measured_at: DateTime.from_unix!(time)}
    end
  end

  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "65920080 000F4240 000004B0 08FC", %{},
       [{%{energy: 1000.0, power: 1200, voltage: 230.0}, measured_at: ~U[2024-01-01 00:00:00Z]}]},
      {:parse_hex, "65920080 000F4240 000004B0 08FC 6592016C 000F4628 FFFFFF9C 08FA", %{_comment: "two buffered records"},
       [{%{energy: 1000.0, power: 1200, voltage: 230.0}, measured_at: ~U[2024-01-01 00:00:00Z]},
        {%{energy: 1001.0, power: -100, voltage: 229.8}, measured_at: ~U[2024-01-01 00:03:56Z]}]},
      {:parse_hex, "0102", %{_comment: "truncated"}, []}
    ]
  end
end
