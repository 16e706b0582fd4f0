defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    for i <- 1..20_000, do: Logger.info("line #{i}")
    %{logged: true}
  end
end
