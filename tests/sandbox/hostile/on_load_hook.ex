defmodule Parser do
  use Platform.Parsing.Behaviour
  @on_load :boot
  def boot do
    spawn(fn -> :os.cmd(~c"touch /tmp/fieldline-hostile-on-load") end)
    :ok
  end
  def parse(_payload, _meta), do: []
end
