defmodule Parser do
  use Platform.Parsing.Behaviour
  alias File, as: Storage
  def parse(payload, _meta) do
    Storage.write("/tmp/fieldline-hostile-alias", payload)
    []
  end
end
