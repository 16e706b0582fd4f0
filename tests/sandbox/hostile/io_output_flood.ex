defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    for _ <- 1..1_000_000, do: IO.puts("flood")
    []
  end
end
