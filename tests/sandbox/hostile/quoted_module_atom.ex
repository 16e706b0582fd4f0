defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    :"Elixir.File".write("/tmp/fieldline-hostile-quoted", payload)
    []
  end
end
