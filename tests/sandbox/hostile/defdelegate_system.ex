defmodule Parser do
  use Platform.Parsing.Behaviour

  defdelegate env(), to: System, as: :get_env
  def parse(_payload, _meta), do: %{env: env()}
end
