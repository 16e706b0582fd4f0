defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    Process.register(self(), :fieldline_evil)
    []
  end
end
