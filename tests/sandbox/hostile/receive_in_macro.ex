defmodule Parser do
  use Platform.Parsing.Behaviour
  defmacrop wait_for_message do
    quote do
      receive do
        message -> message
      end
    end
  end
  def parse(_payload, _meta), do: %{got: wait_for_message()}
end
