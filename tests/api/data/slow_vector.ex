defmodule Parser do
  use Platform.Parsing.Behaviour
  # About a third of a second of work per packet on a 2-core machine: far over the 100 ms default limit.
  def parse(<<n>>, _meta), do: %{sum: Enum.reduce(1..20_000_000, n, fn i, acc -> acc + rem(i, 7) end)}
  def parse(_, _), do: []
  def tests, do: [{:parse_hex, "00", %{_comment: "slow"}, %{sum: 60_000_003}}]
end
