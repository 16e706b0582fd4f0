defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<v>>, _meta), do: %{value: v * 2}
  def parse(_, _), do: []
  def tests, do: [{:parse_hex, "02", %{_comment: "doubles"}, %{value: 4}}, {:parse_hex, "0 3", %{_comment: "wrong on purpose"}, %{value: 7}}]
end
