defmodule Parser do
  use Platform.Parsing.Behaviour
  # Shadow File with the parser itself: the check sees an own call, the attacker hopes the VM
  # resolves File.read!/1 to the real File. It is the parser's own (undefined) function.
  alias __MODULE__, as: File
  def parse(_payload, _meta) do
    %{secret: File.read!("/etc/passwd")}
  end
end
