defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta), do: spin(0)
  defp spin(n), do: spin(n + 1)
end
