defmodule Parser do
  use Platform.Parsing.Behaviour
  import Bitwise
  require Logger
  alias Timex.Interval

  # Ordinary Elixir that parsers write, each construct compiled into what the BEAM check must
  # accept: interpolation, regexes, try/rescue/reraise, comprehensions, structs, dates, Access,
  # Logger, captures, sigils, guards and module attributes. `payload` names the case, meta holds data.

  @moduledoc "Every construct the sandbox must keep working."
  @scale 10
  @names %{1 => "one", 2 => "two"}
  @doc_words ~w(alpha beta)a

  defstruct q: 0, r: nil

  defguardp is_small(x) when is_integer(x) and x < 10

  def parse("interpolation", %{x: x}) do
    %{s: "x=#{x}", i: inspect({1, :a}), c: to_string(to_charlist("ab")), l: "#{[?a, ?b]}", atom: "#{:ok}"}
  end

  def parse("regex", %{x: x}) do
    splitter = &String.split(&1, ~r/[,;]/)

    %{
      run: Regex.run(~r/(\d+)-(\d+)/, "12-34"),
      match: "abc" =~ ~r/b/,
      contains: "abc" =~ "c",
      split: String.split("a,b;c", ~r/[,;]/),
      plain_split: String.split("a b", " "),
      words: String.split(" a  b "),
      replace: String.replace("aaa", ~r/a/, "b", global: false),
      plain_replace: String.replace("aaa", "a", "c"),
      named: Regex.named_captures(~r/(?<year>\d{4})/, "in 2024"),
      built: Regex.match?(Regex.compile!("a#{x}"), "xa5"),
      sigil: Regex.scan(~r/b#{x}/i, "B5 b5"),
      string_match: String.match?("abc", ~r/^a/),
      captured: Enum.map(["a1", "b2"], &Regex.replace(~r/\d/, &1, "#")),
      piped: "x;y" |> splitter.() |> Enum.join("+"),
      source: Regex.source(~r/z+/),
      any: Enum.any?(["q", "zz"], &(&1 =~ ~r/z/))
    }
  end

  def parse("errors", %{x: x}) do
    rescued =
      try do
        raise ArgumentError, "bad #{x}"
      rescue
        e in ArgumentError -> e.message
      end

    nested =
      try do
        try do
          raise "inner"
        rescue
          e -> reraise e, __STACKTRACE__
        end
      rescue
        e in RuntimeError -> "re-raised " <> e.message
      end

    caught =
      try do
        throw({:stop, x})
      catch
        :throw, {:stop, v} -> v
      end

    exited =
      try do
        exit(:gone)
      catch
        :exit, reason -> reason
      end

    after_ran =
      try do
        Map.fetch!(%{}, :missing)
      rescue
        KeyError -> :key_error
      after
        :cleanup
      end

    any_error =
      try do
        String.to_integer("x#{x}")
      rescue
        _ -> :not_a_number
      end

    var_raise =
      try do
        error = %RuntimeError{message: "kept"}
        raise error
      rescue
        e -> e.message
      end

    %{rescued: rescued, nested: nested, caught: caught, exited: exited, after: after_ran, any: any_error, var: var_raise}
  end

  def parse("comprehensions", _meta) do
    %{
      squares: for(x <- 1..3, into: %{}, do: {x, x * x}),
      bytes: for(<<b <- "ab">>, do: b),
      uniq: for(x <- [1, 1, 2], uniq: true, do: x),
      sum: for(x <- [1, 2, 3], reduce: 0, do: (acc -> acc + x)),
      set: for(x <- [3, 3, 4], into: MapSet.new(), do: x) |> MapSet.to_list(),
      filtered: for(x <- 1..6, rem(x, 2) == 0, do: x),
      into: Enum.into([{:a, 1}], %{}),
      stream: Stream.cycle([1, 2]) |> Stream.map(&(&1 * 2)) |> Enum.take(3)
    }
  end

  def parse("dates", meta) do
    dt = DateTime.from_unix!(1_704_067_200)
    berlin = DateTime.shift_zone!(dt, "Europe/Berlin")

    %{
      date: Date.add(~D[2024-01-31], 1),
      iso: DateTime.to_iso8601(dt),
      berlin: berlin.hour,
      naive: NaiveDateTime.add(~N[2024-01-01 00:00:00], 90, :second),
      shifted: Timex.shift(dt, hours: 2),
      days: Date.range(~D[2024-01-01], ~D[2024-01-05]) |> Enum.count(),
      sorted: Enum.sort([~D[2024-03-01], ~D[2024-01-01]], Date),
      format: Calendar.strftime(dt, "%Y/%m/%d"),
      updated: %{dt | year: 2023}.year,
      interval: Interval.new(from: dt, until: [days: 1]) |> Interval.duration(:hours),
      transceived: meta.transceived_at.year,
      time: Time.new!(12, 30, 0) |> Time.to_string()
    }
  end

  def parse("data", %{x: x} = meta) do
    nested = %{a: %{b: x}}
    [first, second] = [x, x + 1]
    destructure([d1, d2], [x])

    %{
      get_in: get_in(nested, [:a, :b]),
      put_in: put_in(nested, [:a, :b], 0),
      update_in: update_in(nested, [:a, :b], &(&1 * 2)),
      access: nested[:a][:b],
      keyword: Keyword.get([k: 1], :k),
      tuple: {x, :t} |> put_elem(1, :u) |> Tuple.append(:v) |> elem(2),
      math: %{pow: 2 ** 10, div: div(7, 2), rem: rem(7, 2), sqrt: :math.sqrt(16.0), max: max(first, second)},
      bits: %{and: 0xF0 &&& 0x3C, shift: 1 <<< 4, right: 256 >>> 4},
      binary: %{part: :binary.part("hello", 1, 3), b16: Base.encode16(<<0xAB>>), crc: :erlang.crc32("x")},
      lists: %{rev: :lists.reverse([1, 2]), get: :maps.get(:k, %{k: 2})},
      atoms: %{existing: String.to_existing_atom("ok"), list: List.to_existing_atom(~c"ok"), words: @doc_words},
      struct: %__MODULE__{q: x}.q,
      small: is_small(x),
      attr: Map.get(@names, 2) <> "/#{@scale}",
      destructured: {d1, d2},
      pipeline: x |> then(&(&1 + 1)) |> tap(fn _ -> :ok end),
      frame_port: get(meta, [:meta, :frame_port], -1),
      json: json_decode(~s({"a": 1})),
      last: get_last_reading(meta, []),
      captures: Enum.map([[1, 2], [3]], &Enum.sum/1),
      chunks: Enum.chunk_every([1, 2, 3], 2),
      sorted: Enum.sort_by([%{v: 2}, %{v: 1}], & &1.v, :desc),
      parsed: Integer.parse("12abc"),
      float: Float.round(1.2345, 2),
      padded: String.pad_leading("7", 3, "0"),
      with:
        with(
          {:ok, v} <- Map.fetch(%{a: 1}, :a),
          true <- v > 0
        ) do
          v
        else
          _ -> :no
        end
    }
  end

  def parse("logs", %{x: x}) do
    Logger.info("info #{x}")
    Logger.debug(fn -> "lazy" end)
    Logger.warn("warn")
    Logger.error("error", extra: 1)
    %{logged: true}
  end

  def parse(<<t::signed-16, h, rest::binary>>, _meta) when byte_size(rest) <= 4 do
    %{t: t / @scale, h: h, f: float_value(rest)}
  end

  def parse(_payload, _meta), do: []

  defp float_value(<<v::float-32>>), do: Float.round(v, 1)
  defp float_value(_), do: nil

  def tests do
    at = ~U[2024-01-01 00:00:00Z]

    [
      {:parse, "interpolation", %{x: 5}, %{s: "x=5", i: "{1, :a}", c: "ab", l: "ab", atom: "ok"}},
      {:parse, "regex", %{x: 5},
       %{
         run: ["12-34", "12", "34"],
         match: true,
         contains: true,
         split: ["a", "b", "c"],
         plain_split: ["a", "b"],
         words: ["a", "b"],
         replace: "baa",
         plain_replace: "ccc",
         named: %{"year" => "2024"},
         built: true,
         sigil: [["B5"], ["b5"]],
         string_match: true,
         captured: ["a#", "b#"],
         piped: "x+y",
         source: "z+",
         any: true
       }},
      {:parse, "errors", %{x: 5},
       %{
         rescued: "bad 5",
         nested: "re-raised inner",
         caught: 5,
         exited: :gone,
         after: :key_error,
         any: :not_a_number,
         var: "kept"
       }},
      {:parse, "comprehensions", %{},
       %{
         squares: %{1 => 1, 2 => 4, 3 => 9},
         bytes: [97, 98],
         uniq: [1, 2],
         sum: 6,
         set: [3, 4],
         filtered: [2, 4, 6],
         into: %{a: 1},
         stream: [2, 4, 2]
       }},
      {:parse, "dates", %{transceived_at: at},
       %{
         date: ~D[2024-02-01],
         iso: "2024-01-01T00:00:00Z",
         berlin: 1,
         naive: ~N[2024-01-01 00:01:30],
         shifted: ~U[2024-01-01 02:00:00Z],
         days: 5,
         sorted: [~D[2024-01-01], ~D[2024-03-01]],
         format: "2024/01/01",
         updated: 2023,
         interval: 24,
         transceived: 2024,
         time: "12:30:00"
       }},
      {:parse, "data", %{x: 5, meta: %{frame_port: 3}, _last_reading: %{data: %{"v" => 1}}},
       %{
         get_in: 5,
         put_in: %{a: %{b: 0}},
         update_in: %{a: %{b: 10}},
         access: 5,
         keyword: 1,
         tuple: :v,
         math: %{pow: 1024, div: 3, rem: 1, sqrt: 4.0, max: 6},
         bits: %{and: 0x30, shift: 16, right: 16},
         binary: %{part: "ell", b16: "AB", crc: 2_363_233_923},
         lists: %{rev: [2, 1], get: 2},
         atoms: %{existing: :ok, list: :ok, words: [:alpha, :beta]},
         struct: 5,
         small: true,
         attr: "two/10",
         destructured: {5, nil},
         pipeline: 6,
         frame_port: 3,
         json: {:ok, %{"a" => 1}},
         last: %{data: %{"v" => 1}},
         captures: [3, 3],
         chunks: [[1, 2], [3]],
         sorted: [%{v: 2}, %{v: 1}],
         parsed: {12, "abc"},
         float: 1.23,
         padded: "007",
         with: 1
       }},
      {:parse, "logs", %{x: 1}, %{logged: true}},
      {:parse_hex, "00EB 3C 3FC00000", %{}, %{t: 23.5, h: 60, f: 1.5}},
      {:parse_hex, "FF9C 01", %{}, %{t: -10.0, h: 1, f: nil}}
    ]
  end
end
