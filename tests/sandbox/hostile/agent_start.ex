defmodule Parser do
  use Platform.Parsing.Behaviour
  # A process that outlives the parse and keeps state across packets.
  def parse(_payload, _meta) do
    {:ok, _pid} = Agent.start(fn -> 0 end, name: :fieldline_evil_state)
    []
  end
end
