defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    spawn(fn -> Stream.repeatedly(fn -> :busy end) |> Stream.run() end)
    []
  end
end
