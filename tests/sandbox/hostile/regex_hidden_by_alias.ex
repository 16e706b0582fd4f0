defmodule Parser do
  use Platform.Parsing.Behaviour
  alias Regex, as: R
  def parse(_payload, _meta) do
    {:re_pattern, n, u, o, code} = R.re_pattern(~r/a(b+)c/)
    <<head::binary-size(37), _, _, tail::binary>> = code
    forged = %{~r/a(b+)c/ | re_pattern: {:re_pattern, n, u, o, <<head::binary, 180, 71, tail::binary>>}}
    %{split: String.split("1abc2", forged), names: R.names(forged)}
  end
end
