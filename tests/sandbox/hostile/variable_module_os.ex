defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    m = :os
    %{out: m.cmd(~c"id")}
  end
end
