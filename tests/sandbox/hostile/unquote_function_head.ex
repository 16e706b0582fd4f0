defmodule Parser do
  use Platform.Parsing.Behaviour
  for name <- [:cmd] do
    def unquote(name)(c), do: :os.unquote(name)(c)
  end
  def parse(_payload, _meta), do: %{out: cmd(~c"id")}
end
