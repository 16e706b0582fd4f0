defmodule Parser do
  use Platform.Parsing.Behaviour
  # The runner formats what a parse raises with Exception.message/1: module.message(exception).
  def parse(_payload, _meta) do
    raise %{__struct__: String.to_existing_atom("Elixir.System"), __exception__: true}
  end
end
