defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    :erlang.open_port({:spawn, ~c"sh -c id"}, [:binary])
    []
  end
end
