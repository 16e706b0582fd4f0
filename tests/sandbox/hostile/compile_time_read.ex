defmodule Parser do
  use Platform.Parsing.Behaviour
  @secret File.read!("/etc/passwd")
  def parse(_payload, _meta), do: %{secret: @secret}
end
