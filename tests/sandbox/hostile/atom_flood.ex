defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    for i <- 1..2_000_000, do: String.to_atom("atom_#{i}")
    []
  end
end
