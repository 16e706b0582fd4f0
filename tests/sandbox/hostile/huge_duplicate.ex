defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{size: byte_size(String.duplicate("x", 4_000_000_000))}
  end
end
