defmodule Parser do
  use Platform.Parsing.Behaviour
  # ErlangError.normalize/2 calls error_info's module and function when the error is rescued.
  def parse(_payload, _meta) do
    :erlang.error({Fieldline.TzDb, "Europe/Berlin"}, :none, error_info: %{module: :persistent_term, function: :put})
  end
end
