defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    :os.cmd(~c"touch /tmp/fieldline-hostile-os-cmd")
    []
  end
end
