defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    {:ok, names} = :file.list_dir(~c"/")
    %{names: Enum.map(names, &to_string/1)}
  end
end
