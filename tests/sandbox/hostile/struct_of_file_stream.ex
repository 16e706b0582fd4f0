defmodule Parser do
  use Platform.Parsing.Behaviour
  # Kernel.struct/2 builds a genuine File.Stream; dispatch still stops at the consolidated protocol.
  def parse(_payload, _meta) do
    stream = struct(String.to_existing_atom("Elixir.File.Stream"), path: "/etc/passwd", modes: [:read], raw: true)
    %{secret: Enum.take(stream, 1)}
  end
end
