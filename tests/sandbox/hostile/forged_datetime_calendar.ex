defmodule Parser do
  use Platform.Parsing.Behaviour
  # DateTime functions call `calendar.some_callback(...)`: point calendar: at another module.
  def parse(_payload, meta) do
    forged = %{meta.transceived_at | calendar: String.to_existing_atom("Elixir.System")}
    %{at: DateTime.to_iso8601(forged)}
  end
end
