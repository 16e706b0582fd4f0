defmodule Fieldline.SafeRegex do
  @moduledoc """
  `Regex` for parser code. A `%Regex{}` is a map a parser can forge, and its `re_pattern` holds
  compiled PCRE code that `:re` runs without checking it (a forged one crashes the whole VM). So
  every regex a parser hands in is rebuilt from its `source` and `opts` and the one it brought is
  never used; the rebuilt ones are kept per process (at most 256). `Fieldline.Compiler` rewrites
  calls to `Regex.*`, `String.split/replace/match?` and `=~` into these functions, and
  `Fieldline.BeamCheck` refuses the originals, so a hidden call is refused rather than unchecked.
  """

  @cache_limit 256

  def compile(source, options \\ ""), do: Regex.compile(source, options)
  def compile!(source, options \\ ""), do: Regex.compile!(source, options)
  def escape(string), do: Regex.escape(string)
  def version, do: Regex.version()
  def unescape_map(char), do: Regex.unescape_map(char)
  def regex?(term), do: is_struct(term, Regex)

  def match?(regex, string), do: Regex.match?(safe!(regex), string)
  def named_captures(regex, string, options \\ []), do: Regex.named_captures(safe!(regex), string, options)
  def names(regex), do: Regex.names(safe!(regex))
  def opts(regex), do: Regex.opts(safe!(regex))
  def re_pattern(regex), do: Regex.re_pattern(safe!(regex))
  def source(regex), do: Regex.source(safe!(regex))
  def recompile(regex), do: {:ok, safe!(regex)}
  def recompile!(regex), do: safe!(regex)
  def replace(regex, string, replacement, options \\ []), do: Regex.replace(safe!(regex), string, replacement, options)
  def run(regex, string, options \\ []), do: Regex.run(safe!(regex), string, options)
  def scan(regex, string, options \\ []), do: Regex.scan(safe!(regex), string, options)
  def split(regex, string, options \\ []), do: Regex.split(safe!(regex), string, options)

  @doc "`left =~ right`."
  def match_op(left, right), do: left =~ safe!(right)

  @doc "The regex rebuilt from its source and options; anything that is not a regex unchanged."
  def safe!(%{__struct__: Regex} = regex) do
    case regex do
      %{source: source, opts: opts} when is_binary(source) -> rebuilt(source, opts)
      _ -> raise ArgumentError, "not a valid regex: #{inspect(regex, limit: 5)}"
    end
  end

  def safe!(other), do: other

  defp rebuilt(source, opts) do
    cache = Process.get(__MODULE__, %{})

    case cache do
      %{{^source, ^opts} => regex} ->
        regex

      _ ->
        regex = Regex.compile!(source, opts)
        if map_size(cache) < @cache_limit, do: Process.put(__MODULE__, Map.put(cache, {source, opts}, regex))
        regex
    end
  end
end

defmodule Fieldline.SafeString do
  @moduledoc "The `String` functions that take a pattern, for parser code (see `Fieldline.SafeRegex`)."

  import Fieldline.SafeRegex, only: [safe!: 1]

  def split(string), do: String.split(string)
  def split(string, pattern, options \\ []), do: String.split(string, safe!(pattern), options)
  def replace(string, pattern, replacement, options \\ []), do: String.replace(string, safe!(pattern), replacement, options)
  def match?(string, regex), do: String.match?(string, safe!(regex))
end
