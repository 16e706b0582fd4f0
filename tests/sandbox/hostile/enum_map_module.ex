defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{out: Enum.map([:os], & &1.cmd(~c"id"))}
  end
end
