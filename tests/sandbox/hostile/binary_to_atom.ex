defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    %{key: :erlang.binary_to_atom(Base.encode16(payload), :utf8)}
  end
end
