defmodule Parser do
  use Platform.Parsing.Behaviour
  # A few KB of gzip that inflate to gigabytes.
  def parse(payload, _meta) do
    %{size: byte_size(:zlib.gunzip(payload))}
  end
end
