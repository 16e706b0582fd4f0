defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    :erlang.binary_to_term(payload)
  end
end
