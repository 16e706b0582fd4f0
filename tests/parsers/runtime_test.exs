# The Elixir runtime inside the workers, tested directly (ctest runs this with the built runtime).
ExUnit.start()
Calendar.put_time_zone_database(Fieldline.TzDb)

defmodule BehaviourTest do
  use ExUnit.Case, async: true
  alias Platform.Parsing.Behaviour, as: B

  test "get/3 tries the atom key, then the same name as a string key" do
    assert B.get(%{meta: %{frame_port: 3}}, [:meta, :frame_port]) == 3
    assert B.get(%{"meta" => %{"frame_port" => 4}}, [:meta, :frame_port]) == 4
    assert B.get(%{a: 1}, :a) == 1
  end

  test "get/3 indexes lists and tuples, and gives the default for anything that does not fit" do
    assert B.get(%{l: [10, 20, 30]}, [:l, 1]) == 20
    assert B.get(%{t: {:lon, :lat}}, [:t, 1]) == :lat
    assert B.get(%{t: {1}}, [:t, 5], :none) == :none
    assert B.get(%{a: 5}, [:a, :b], :d) == :d
    assert B.get(nil, [:x]) == nil
    assert B.get(%{a: nil}, [:a], 7) == 7
  end

  test "get_last_reading/2 uses test meta, or the history with queries and :_" do
    r = %{data: %{"temperature" => 1}, measured_at: ~U[2024-01-01 00:00:00Z]}
    assert B.get_last_reading(%{_last_reading: r}, []) == r
    assert B.get_last_reading(%{_last_reading_map: %{[temperature: :_] => r}}, temperature: :_) == r
    Process.put(:fieldline_last_readings, [%{data: %{"humidity" => 5}, measured_at: nil}, r])
    assert B.get_last_reading(%{}, temperature: :_) == r
    assert B.get_last_reading(%{}, temperature: 1) == r
    assert B.get_last_reading(%{}, temperature: 2) == nil
    assert B.get_last_reading(%{}, []).data == %{"humidity" => 5}
  end
end

defmodule JsonTest do
  use ExUnit.Case, async: true

  test "decodes objects with string keys and keeps integers and floats apart" do
    assert Fieldline.Json.decode(~s({"a": [1, 1.0, -2e2, true, null, "\\u00e9\\ud83d\\ude00"]})) ==
             {:ok, %{"a" => [1, 1.0, -200.0, true, nil, "é😀"]}}
  end

  test "rejects malformed JSON with a reason" do
    for bad <- ["", "{", "[1,]", ~s({"a": 1,}), "01", ~s("\\ud800"), ~s({"a" 1}), "1 2", "nul"] do
      assert {:error, _} = Fieldline.Json.decode(bad), bad
    end
  end

  test "nesting is bounded" do
    assert {:error, "JSON nested too deeply"} = Fieldline.Json.decode(String.duplicate("[", 1000))
  end
end

defmodule NormalizeTest do
  use ExUnit.Case, async: true
  alias Fieldline.Normalize, as: N

  test "empty results are no readings" do
    assert N.readings(nil) == {:ok, []}
    assert N.readings([]) == {:ok, []}
    assert N.readings(%{}) == {:ok, []}
    assert N.readings([nil, %{}]) == {:ok, []}
  end

  test "data becomes JSON-safe: atoms, dates, tuples, non-UTF-8 binaries" do
    {:ok, [{data, nil, nil, nil}]} = N.readings(%{a: :b, t: ~U[2024-01-01 00:00:00Z], d: ~D[2024-02-03], p: {1, 2}, raw: <<0xFF, 0x01>>, i: 1, f: 1.0})
    assert data == %{"a" => "b", "t" => "2024-01-01T00:00:00Z", "d" => "2024-02-03", "p" => [1, 2], "raw" => "FF01", "i" => 1, "f" => 1.0}
  end

  test "options carry measured_at, location and fields" do
    {:ok, [{data, measured_at, location, fields}]} =
      N.readings({%{x: 1}, measured_at: ~U[2024-01-01 00:00:01Z], location: {13.4, 52.5}, fields: %{"p" => %{a: 1}}})

    assert data == %{"x" => 1}
    assert measured_at == 1_704_067_201_000_000
    assert location == [13.4, 52.5]
    assert fields == %{"p" => %{"a" => 1}}
  end

  test "anything else is an error naming it" do
    assert {:error, "bad return value" <> _} = N.readings({:ok, 42})
    assert {:error, "unknown reading option :colour"} = N.readings({%{x: 1}, colour: :red})
    assert {:error, "cannot store" <> _} = N.readings(%{f: self()})
  end
end

defmodule TimeZoneTest do
  use ExUnit.Case, async: true

  test "shift_zone uses the system's IANA data, including summer time" do
    assert {:ok, %DateTime{hour: 14, zone_abbr: "CEST"}} = DateTime.shift_zone(~U[2024-07-01 12:00:00Z], "Europe/Berlin")
    assert {:ok, %DateTime{hour: 13, zone_abbr: "CET"}} = DateTime.shift_zone(~U[2024-01-01 12:00:00Z], "Europe/Berlin")
  end

  test "beyond the last transition the POSIX rule of the file applies" do
    assert {:ok, %DateTime{hour: 8, zone_abbr: "EDT"}} = DateTime.shift_zone(~U[2045-07-01 12:00:00Z], "America/New_York")
    assert {:ok, %DateTime{hour: 7, zone_abbr: "EST"}} = DateTime.shift_zone(~U[2045-01-01 12:00:00Z], "America/New_York")
  end

  test "gaps and ambiguous wall times" do
    assert {:gap, %DateTime{hour: 1}, %DateTime{hour: 3}} = DateTime.from_naive(~N[2024-03-31 02:30:00], "Europe/Berlin")
    assert {:ambiguous, %DateTime{zone_abbr: "CEST"}, %DateTime{zone_abbr: "CET"}} =
             DateTime.from_naive(~N[2024-10-27 02:30:00], "Europe/Berlin")
  end

  test "unknown or path-like zone names are not found" do
    assert {:error, :time_zone_not_found} = DateTime.shift_zone(~U[2024-01-01 00:00:00Z], "Mars/Olympus")
    assert {:error, :time_zone_not_found} = DateTime.shift_zone(~U[2024-01-01 00:00:00Z], "../../etc/passwd")
  end
end

defmodule TimexTest do
  use ExUnit.Case, async: true

  test "shift, to_datetime, unix conversions, diff, format" do
    assert Timex.shift(~U[2024-01-31 10:00:00Z], months: 1) == ~U[2024-02-29 10:00:00Z]
    assert Timex.shift(~U[2024-01-01 00:00:00Z], days: -1, hours: 2) == ~U[2023-12-31 02:00:00Z]
    berlin = Timex.to_datetime(~N[2024-01-05 10:00:00], "Europe/Berlin")
    assert Timex.to_unix(berlin) == 1_704_445_200
    assert Timex.from_unix(1_704_445_200) == ~U[2024-01-05 09:00:00Z]
    assert Timex.diff(~U[2024-01-02 00:00:00Z], ~U[2024-01-01 00:00:00Z], :hours) == 24
    assert Timex.format(berlin, "{YYYY}-{0M}-{0D}T{h24}:{m}:{s}{Z:}") == {:ok, "2024-01-05T10:00:00+01:00"}
    assert Timex.format(berlin, "%d.%m.%Y", :strftime) == {:ok, "05.01.2024"}
    assert Timex.before?(~U[2024-01-01 00:00:00Z], berlin)
    i = Timex.Interval.new(from: ~U[2024-01-01 00:00:00Z], until: [days: 2])
    assert Timex.Interval.duration(i, :hours) == 48
  end
end

defmodule AllowListTest do
  use ExUnit.Case, async: true

  defp check(body) do
    {:ok, ast} = Code.string_to_quoted("defmodule Parser do\n" <> body <> "\nend")
    {:defmodule, meta, args} = ast
    Fieldline.AllowList.check({:defmodule, Keyword.put(meta, :fieldline_top, true), args})
  end

  test "ordinary parser code passes" do
    assert :ok = check("use Platform.Parsing.Behaviour\nimport Bitwise\ndef parse(<<a, b>>, m), do: %{v: a &&& b, p: m.meta, e: Enum.sum([1]), t: __MODULE__.x()}\ndef x, do: 1")
  end

  test "tricks that hide a forbidden call are caught" do
    assert {:error, [{3, "dynamic call m.read(...)" <> _}]} = check("def parse(_, _) do\nm = __MODULE__; m.read(1)\nend")
    assert {:error, _} = check("alias File, as: F\ndef parse(_, _), do: F.read(\"x\")")
    assert {:error, _} = check("import File\ndef parse(_, _), do: read(\"x\")")
    assert {:error, _} = check("def parse(_, _), do: Kernel.apply(File, :read, [\"x\"])")
    assert {:error, _} = check("def parse(_, _), do: Enum.map([1], &spawn/1)")
    assert {:error, _} = check("def parse(_, _), do: Enum.map([\"x\"], &File.read/1)")
    assert {:error, _} = check("def parse(_, _), do: :\"Elixir.System\".halt()")
    assert {:error, _} = check("@on_load :boom\ndef boom, do: :ok\ndef parse(_, _), do: []")
  end

  test "dot access on a variable reads maps only at run time" do
    src = "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(x, _), do: %{v: x.field}\nend\n"
    {:ok, m} = Fieldline.Compiler.load("dotaccess", src)
    assert m.parse(%{field: 1}, %{}) == %{v: 1}
    assert_raise ArgumentError, ~r/not a map/, fn -> m.parse(String, %{}) end
  end
end

defmodule WorkerStatsTest do
  use ExUnit.Case, async: false

  @source "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: []\nend\n"

  # The stats of the last frame of one parse call (`announce`: the host does not know it compiled).
  defp last_stats(announce) do
    packet = {"p", "d", "binary", <<1>>, %{}, 1_700_000_000_000_000, nil}
    request = {:parse, "statsparser", @source, %{"timeout_ms" => 100, "heap_words" => 1_000_000}, [], [packet], announce, nil}
    Fieldline.Worker.handle(request, fn frame -> send(self(), {:frame, frame}) end)
    assert_received {:frame, {:outcomes, 0, [_], stats}}
    stats
  end

  test "a parse call reports the memory total after compiling and every 16th call, the atom count always" do
    Process.put(:fieldline_parse_calls, 0)
    assert %{atoms: _, memory: _} = last_stats(true)
    reported = for _ <- 2..32, do: Map.has_key?(last_stats(false), :memory)
    assert reported == for(call <- 2..32, do: rem(call, 16) == 0)
    assert Enum.all?(for _ <- 1..3, do: is_integer(last_stats(false).atoms))
  end
end
