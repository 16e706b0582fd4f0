defmodule Parser do
  use Platform.Parsing.Behaviour

  def parse(<<1>>, _meta), do: %{v: __MODULE__.nope()}
  def parse(<<2>>, _meta), do: %{v: String.upcase(42)}
  def parse(_, _), do: []

  def tests, do: [{:parse_hex, "01", %{}, []}, {:parse_hex, "02", %{}, []}]
end
