defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    {:module, m} = Code.ensure_loaded(:os)
    %{m: m}
  end
end
