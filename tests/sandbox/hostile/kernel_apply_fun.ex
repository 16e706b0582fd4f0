defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{out: Kernel.apply(fn c -> c end, [~c"id"])}
  end
end
