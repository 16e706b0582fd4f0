defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    Port.open({:spawn, "sh -c id"}, [:binary])
    []
  end
end
