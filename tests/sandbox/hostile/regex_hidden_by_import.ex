defmodule Parser do
  use Platform.Parsing.Behaviour
  # Regex is allowed, so the AST check lets the import through; the imported run/2 is not
  # rewritten to the sandbox's wrapper and would hand the forged pattern to :re (VM crash).
  import Regex, only: [run: 2]
  def parse(_payload, _meta) do
    {:re_pattern, n, u, o, code} = Regex.re_pattern(~r/a(b+)c/)
    <<head::binary-size(37), _, _, tail::binary>> = code
    forged = %{~r/a(b+)c/ | re_pattern: {:re_pattern, n, u, o, <<head::binary, 180, 71, tail::binary>>}}
    %{run: run(forged, "xabbbc")}
  end
end
