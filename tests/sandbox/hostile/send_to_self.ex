defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta), do: flood(0)
  defp flood(n) do
    send(self(), {:msg, n})
    flood(n + 1)
  end
end
