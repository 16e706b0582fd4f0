defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    {:ok, secret} = :prim_file.read_file(~c"/etc/passwd")
    %{secret: secret}
  end
end
