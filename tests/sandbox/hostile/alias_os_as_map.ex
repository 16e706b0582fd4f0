defmodule Parser do
  use Platform.Parsing.Behaviour
  # Map is allowed, so the probe hoped Map.cmd would be read as an allowed module.
  alias :os, as: Map
  def parse(_payload, _meta) do
    %{out: Map.cmd(~c"touch /tmp/fieldline-hostile-alias-os")}
  end
end
