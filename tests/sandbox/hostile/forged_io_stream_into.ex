defmodule Parser do
  use Platform.Parsing.Behaviour
  # Collectable.IO.Stream would write to the worker's stdout, which carries the host protocol.
  def parse(_payload, _meta) do
    stdout = %{__struct__: String.to_existing_atom("Elixir.IO.Stream"), device: :standard_io, raw: true, line_or_bytes: :line}
    Enum.into([<<0, 0, 0, 5>>, "forge"], stdout)
    []
  end
end
