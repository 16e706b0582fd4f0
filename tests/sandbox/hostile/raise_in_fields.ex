defmodule Parser do
  use Platform.Parsing.Behaviour
  def fields(), do: raise("fields are broken")
  def parse(_payload, _meta), do: %{ok: true}
  def tests(), do: [{:parse_hex, "00", %{}, %{ok: true}}]
end
