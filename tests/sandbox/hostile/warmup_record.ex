defmodule Parser do
  use Platform.Parsing.Behaviour
  alias Fieldline.Warmup, as: Timex
  # The runtime's build-time recorder writes a file and halts the VM: reached through an alias.
  def parse(_payload, _meta) do
    Timex.record()
    []
  end
end
