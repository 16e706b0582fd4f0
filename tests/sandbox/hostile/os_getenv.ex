defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{env: Enum.map(:os.getenv(), &to_string/1)}
  end
end
