defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    Process.flag(:trap_exit, true)
    []
  end
end
