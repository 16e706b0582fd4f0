defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    dbg(payload)
    []
  end
end
