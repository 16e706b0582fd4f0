defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta), do: for(i <- 1..5_000, do: %{i: i})
end
