defmodule Parser do
  use Platform.Parsing.Behaviour
  # Poison the worker's time zone cache for every later parse.
  def parse(_payload, _meta) do
    :persistent_term.put({Fieldline.TzDb, "Europe/Berlin"}, :junk)
    []
  end
end
