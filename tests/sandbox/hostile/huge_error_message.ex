defmodule Parser do
  use Platform.Parsing.Behaviour
  # A 16 MiB exception message from a 1-byte packet: stored as is, it would fill the disk and the
  # memory of every request that lists the packet.
  def parse(_payload, _meta), do: raise(:binary.copy("E", 16_777_216))
end
