defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    mod = String
    mod.to_atom("hidden")
    []
  end
end
