defmodule Parser do
  use Platform.Parsing.Behaviour

  def parse(p, _meta) do
    String.upcas(p)
  end
end
