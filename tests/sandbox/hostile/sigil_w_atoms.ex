defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    %{keys: ~w(a b #{Base.encode16(payload)})a}
  end
end
