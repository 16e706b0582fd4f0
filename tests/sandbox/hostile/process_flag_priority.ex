defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    :erlang.process_flag(:priority, :max)
    spin(0)
  end
  defp spin(n), do: spin(n + 1)
end
