defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    :erlang.spawn_opt(fn -> Stream.repeatedly(fn -> :busy end) |> Stream.run() end, [{:priority, :high}])
    []
  end
end
