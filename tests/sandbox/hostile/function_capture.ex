defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    run = Function.capture(:os, :cmd, 1)
    %{out: run.(~c"id")}
  end
end
