defmodule Parser do
  use Platform.Parsing.Behaviour
  # Access on a struct calls struct_module.fetch/2.
  def parse(_payload, _meta) do
    forged = %{__struct__: :os, cmd: ~c"id"}
    %{out: forged[:cmd]}
  end
end
