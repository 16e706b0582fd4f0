defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{env: System.get_env()}
  end
end
