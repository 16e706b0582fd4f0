defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    %{sum: Stream.cycle([1, 2, 3]) |> Enum.reduce(0, &(&1 + &2))}
  end
end
