defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    Node.spawn(node(), fn -> :ok end)
    []
  end
end
