defmodule Parser do
  use Platform.Parsing.Behaviour
  # A %Regex{} carries compiled PCRE code that :re runs unchecked: these two bytes of its header
  # make :re.run crash the whole VM (SIGSEGV). Without the sandbox's rebuild this kills the worker.
  def parse(_payload, _meta) do
    {:re_pattern, n, u, o, code} = Regex.re_pattern(~r/a(b+)c/)
    <<head::binary-size(37), _, _, tail::binary>> = code
    forged = %{~r/a(b+)c/ | re_pattern: {:re_pattern, n, u, o, <<head::binary, 180, 71, tail::binary>>}}
    %{run: Regex.run(forged, "xabbbc"), split: String.split("1abc2", forged), match: "abc" =~ forged}
  end
end
