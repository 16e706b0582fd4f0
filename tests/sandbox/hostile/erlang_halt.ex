defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    :erlang.halt(0)
  end
end
