defmodule Parser do
  use Platform.Parsing.Behaviour
  import Fieldline.Frames, only: [take: 1]
  # Reads the worker's next request (another packet's payload) straight off fd 3.
  def parse(_payload, _meta) do
    take(0)
    []
  end
end
