defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    System.cmd("sh", ["-c", "touch /tmp/fieldline-hostile-system-cmd"])
    []
  end
end
