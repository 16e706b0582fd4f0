defmodule Parser do
  use Platform.Parsing.Behaviour

  # Door/window contact: uint8 state (0 closed, 1 open), uint16 open counter, uint8 battery %.
  # Each reading says whether the state changed since the last reading.

  def parse(<<state, count::16, battery>>, meta) when state in [0, 1] do
    position = if state == 1, do: "open", else: "closed"

    changed =
      case get_last_reading(meta, position: :_) do
        %{data: data} -> get(data, [:position]) != position
        nil -> true
      end

    %{position: position, open_count: count, battery: battery, changed: changed}
  end

  def parse(_payload, _meta), do: []

  def tests do
    [
      {:parse_hex, "01 00 2A 64", %{}, %{position: "open", open_count: 42, battery: 100, changed: true}},
      {:parse_hex, "00002A64", %{_last_reading: %{data: %{"position" => "closed"}, measured_at: ~U[2024-01-01 00:00:00Z]},
                                 _comment: "still closed"},
       %{position: "closed", open_count: 42, battery: 100, changed: false}},
      {:parse_hex, "07 00 00 00", %{_comment: "invalid state"}, []}
    ]
  end
end
