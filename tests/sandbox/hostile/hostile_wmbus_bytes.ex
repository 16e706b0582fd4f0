defmodule Parser do
  use Platform.Parsing.Behaviour
  # Endless DIFE and VIFE chains, a plain-text length past the end and 50000 empty records: the
  # decoder reports them as unknown records and returns.
  def parse(payload, _meta) do
    inputs = [
      payload,
      <<0x84>> <> :binary.copy(<<0xFF>>, 100_000),
      <<0x04>> <> :binary.copy(<<0xFF>>, 100_000),
      <<0x01, 0x7C, 0xFF, 0x41>>,
      :binary.copy(<<0x00, 0x00>>, 50_000)
    ]

    %{records: inputs |> Enum.map(&length(LibWmbus.Dib.parse_dib(&1))) |> Enum.sum()}
  end
end
