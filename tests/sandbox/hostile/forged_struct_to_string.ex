defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    forged = %{__struct__: String.to_existing_atom("Elixir.URI"), path: "/etc/passwd"}
    %{text: "#{forged}"}
  end
end
