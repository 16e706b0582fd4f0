defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    %{mod: Module.concat(["Elixir", Base.encode16(payload)])}
  end
end
