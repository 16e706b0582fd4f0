defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta), do: {:ok, 42}
end
