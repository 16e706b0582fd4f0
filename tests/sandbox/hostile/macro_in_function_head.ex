defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(unquote(Macro.var(:payload, nil)), _meta) do
    %{out: payload}
  end
end
