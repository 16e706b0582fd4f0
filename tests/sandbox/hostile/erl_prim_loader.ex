defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    {:ok, secret, _path} = :erl_prim_loader.get_file(~c"/etc/passwd")
    %{secret: secret}
  end
end
