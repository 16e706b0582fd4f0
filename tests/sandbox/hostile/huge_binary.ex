defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    big = :binary.copy(<<0>>, 3_000_000_000)
    %{size: byte_size(big)}
  end
end
