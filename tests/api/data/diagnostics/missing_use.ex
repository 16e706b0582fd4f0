defmodule Parser do
  def parse(p, _meta), do: %{value: p}
  def fields, do: []
  def tests, do: []
end
