defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{out: :rpc.call(node(), :os, :cmd, [~c"id"])}
  end
end
