defmodule Parser do
  use Platform.Parsing.Behaviour

  def parse(p, _meta) do
    {File.read(p), :os.cmd(~c"id")}
  end
end
