defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{files: Path.wildcard("/etc/*")}
  end
end
