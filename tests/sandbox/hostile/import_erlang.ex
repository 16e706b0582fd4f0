defmodule Parser do
  use Platform.Parsing.Behaviour
  import :erlang
  def parse(_payload, _meta) do
    halt()
  end
end
