defmodule Parser do
  use Platform.Parsing.Behaviour
  defdelegate next_request(watch_us), to: Fieldline.Frames, as: :take
  def parse(_payload, _meta) do
    next_request(1000)
    []
  end
end
