defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    GenServer.call(:code_server, {:add_path, :first, ~c"/tmp"})
    []
  end
end
