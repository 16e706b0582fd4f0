defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta), do: %{callback: fn -> :nope end}
end
