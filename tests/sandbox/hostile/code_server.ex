defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    :code.purge(Fieldline.Runner)
    :code.add_patha(~c"/tmp")
    []
  end
end
