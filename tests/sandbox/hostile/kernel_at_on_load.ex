defmodule Parser do
  use Platform.Parsing.Behaviour
  Kernel.@(on_load(:boot))
  def boot, do: :ok
  def parse(_payload, _meta), do: []
end
