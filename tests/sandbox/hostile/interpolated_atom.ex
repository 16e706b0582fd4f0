defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    %{key: :"sensor_#{Base.encode16(payload)}"}
  end
end
