defmodule Parser do
  use Platform.Parsing.Behaviour

  def parse(<<v>>, _meta) do
    x = 1
    %{value: v}
  end

  def parse(_, _), do: []

  def tests, do: [{:parse_hex, "07", %{}, %{value: 7}}]
end
