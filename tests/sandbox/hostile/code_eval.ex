defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    {value, _} = Code.eval_string(payload)
    %{value: value}
  end
end
