defmodule Parser do
  use Platform.Parsing.Behaviour
  require Application
  @cookie Application.compile_env(:kernel, :cookie)
  def parse(_payload, _meta), do: %{cookie: inspect(@cookie)}
end
