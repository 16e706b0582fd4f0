defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    File.write!("/tmp/fieldline-hostile-file-write", payload)
    []
  end
end
