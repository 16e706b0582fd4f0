defmodule Parser do
  use Platform.Parsing.Behaviour
  # A calendar suffix makes the sigil call Module.parse_date/1 while the parser compiles.
  @d ~D[2020-01-01 Fieldline.Lockdown]
  def parse(_payload, _meta), do: %{d: @d}
end
