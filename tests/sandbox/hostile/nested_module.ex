defmodule Parser do
  use Platform.Parsing.Behaviour
  defmodule Helper do
    def boom, do: :ok
  end
  def parse(_payload, _meta), do: []
end
