defmodule Parser do
  use Platform.Parsing.Behaviour
  defdelegate cmd(command), to: :os
  def parse(_payload, _meta), do: %{out: cmd(~c"id")}
end
