# The original platform's libraries in the runtime (LibWmbus, TimeSeries, Timex.Interval enumeration)
# and the test-vector semantics of parser-contract.md, tested directly against the built runtime.
ExUnit.start()
Calendar.put_time_zone_database(Fieldline.TzDb)

defmodule LibWmbusTest do
  use ExUnit.Case, async: true

  defp dib(hex), do: hex |> String.replace(" ", "") |> Base.decode16!() |> LibWmbus.Dib.parse_dib()
  defp datas(hex), do: Enum.map(dib(hex), & &1.data)

  test "the standard's RSP_UD example: volume, max flow in storage 5, energy in tariff 2 of sub-unit 1" do
    assert dib("03 13 15 31 00  DA 02 3B 13 01  8B 60 04 37 18 02") == [
             %{data: %{desc: :volume, value: 12.565, unit: "m³"}, function_field: :current_value,
               memory_address: 0, sub_device: 0, tariff: 0},
             %{data: %{desc: :flow, value: 0.113, unit: "m³/h"}, function_field: :max_value,
               memory_address: 5, sub_device: 0, tariff: 0},
             %{data: %{desc: :energy, value: 218_370, unit: "Wh"}, function_field: :current_value,
               memory_address: 0, sub_device: 1, tariff: 2}
           ]
  end

  test "plain-text VIF with a correction-factor VIFE (the standard's %RH example)" do
    assert [%{desc: :plain_text, unit: "%RH", value: 33.96}] = datas("02 FC 03 48 52 25 74 44 0D")
  end

  test "every data field coding: integers of 8 to 64 bits (signed), BCD of 2 to 12 digits, reals, no data" do
    assert [%{value: -1}, %{value: 0x1234}, %{value: -2}, %{value: 0x7FFFFFFF}, %{value: 2.5}, %{value: -1},
            %{value: 1}, %{value: 0}, %{value: 12}, %{value: 1234}, %{value: 123_456}, %{value: 12_345_678},
            %{value: 123_456_789_012}, %{value: 0}] =
             datas("01 FD 3A FF  02 FD 3A 34 12  03 FD 3A FE FF FF  04 FD 3A FF FF FF 7F  05 FD 3A 00 00 20 40" <>
                   "  06 FD 3A FF FF FF FF FF FF  07 FD 3A 01 00 00 00 00 00 00 00  00 FD 3A  09 FD 3A 12" <>
                   "  0A FD 3A 34 12  0B FD 3A 56 34 12  0C FD 3A 78 56 34 12  0E FD 3A 12 90 78 56 34 12" <>
                   "  08 FD 3A")
  end

  test "negative BCD (leading F nibble) and scaling by the VIF's exponent" do
    # 4-digit BCD F015 = -15, flow temperature 10^-1 °C.
    assert [%{desc: :supply_temperature, value: -1.5, unit: "°C"}] = datas("0A 5A 15 F0")
    # 10^1 Wh keeps integers; 10^-3 m³ divides into a float.
    assert [%{value: 120}, %{value: 0.012}] = datas("01 04 0C  01 13 0C")
  end

  test "variable length data: text (reversed), positive and negative BCD, binary numbers; reserved LVAR stops" do
    assert [%{desc: :model_version, value: "ABC"}, %{value: 1234}, %{value: -1234}, %{value: 258}] =
             datas("0D FD 0C 03 43 42 41  0D FD 3A C2 34 12  0D FD 3A D2 34 12  0D FD 3A E2 02 01")

    assert [%{desc: :unknown_lvar, value: "F7"}] = datas("0D FD 3A F7 00 00")
  end

  test "DIFE chains: storage number, tariff and sub-unit accumulate over DIFEs" do
    # storage 1 + (0xF << 1) + (0x1 << 5), tariff 3 + (1 << 2), sub-device 1 + (1 << 1)
    assert [%{memory_address: 63, tariff: 7, sub_device: 3, function_field: :min_value}] =
             dib("E4 FF 51 13 01 00 00 00")
  end

  test "dates and times: type G date, type F date-time, type I with seconds, type J time" do
    assert [%{desc: :date, value: ~D[2020-12-31]}] = datas("02 6C 9F 2C")
    assert [%{desc: :datetime, value: ~N[2018-03-20 17:50:00], unit: ""}] = datas("04 6D 32 31 54 23")
    assert [%{desc: :datetime, value: ~N[2018-03-20 17:50:07]}] = datas("06 6D 07 32 31 54 23 00")
    assert [%{desc: :datetime, value: ~T[17:50:07]}] = datas("03 6D 07 32 11")
    # An impossible date is no value, not a crash.
    assert [%{desc: :date, value: nil}] = datas("02 6C 00 00")
  end

  test "function fields and the 0xFD table: error flags are hex, most significant byte first" do
    assert [%{data: %{desc: :error_codes, value: "0403", unit: ""}}] = dib("02 FD 17 03 04")
    assert [%{function_field: :error_value}] = dib("31 2B 00")
    assert [%{desc: :voltage, value: 230.0, unit: "V"}] = datas("02 FD 48 FC 08")
    assert [%{desc: :access_number, value: 7}] = datas("01 FD 08 07")
  end

  test "the 0xFB table" do
    assert [%{desc: :energy, value: 1.2, unit: "MWh"}] = datas("01 FB 00 0C")
    assert [%{desc: :energy, value: 12, unit: "GJ"}] = datas("01 FB 09 0C")
  end

  test "combinable VIFEs: per-time units, unknown VIFEs in the unit, manufacturer specific" do
    assert [%{desc: :energy, unit: "Wh/h"}] = datas("01 83 22 01")
    assert [%{desc: :operation_time, unit: "days with unknown vife"}] = datas("01 A7 11 01")
    assert [%{desc: :volume, vife: [:manufacturer_specific]}] = datas("01 93 FF 01 05")
    assert [%{desc: :manufacturer_specific, value: 5}] = datas("01 7F 05")
  end

  test "unknown and reserved codes are reported (desc unknown_...), never raised" do
    assert [%{desc: :unknown_vif, vif: 0x6F}] = datas("01 6F 00")
    assert [%{desc: :unknown_vif, vif: 0x79}] = datas("01 79 00")
    assert [%{desc: :unknown_vif, vif: 0xFD7F}] = datas("01 FD 7F 00")
    assert [%{desc: :unknown_dif}] = datas("3F 00 00")
  end

  test "manufacturer specific data and idle filler" do
    assert [%{desc: :energy}, %{desc: :manufacturer_specific_data, value: "0102", more_records_follow: false}] =
             datas("2F 2F 01 03 05 0F 01 02")
  end

  test "a record cut short is reported and ends the list" do
    assert [%{desc: :energy}, %{desc: :unknown_truncated_record, value: "0403"}] = datas("01 03 05 04 03")
    assert [%{desc: :unknown_truncated_record}] = datas("84")
    assert [%{desc: :unknown_truncated_record}] = datas("04 FD")
  end

  test "parse_dib of something that is not a binary raises ArgumentError" do
    assert_raise ArgumentError, fn -> LibWmbus.Dib.parse_dib(42) end
  end
end

defmodule LibWmbusHostileTest do
  use ExUnit.Case, async: true

  test "hostile wmbus: random bytes never raise and always give record maps" do
    :rand.seed(:exsss, {13, 757, 3})

    for _ <- 1..3000 do
      bytes = :crypto.strong_rand_bytes(:rand.uniform(200))
      records = LibWmbus.Dib.parse_dib(bytes)
      assert is_list(records)
      assert length(records) <= 1001

      for r <- records do
        assert %{data: %{desc: desc, unit: unit}, function_field: _, memory_address: _, sub_device: _, tariff: _} = r
        assert is_atom(desc) and is_binary(unit)
      end
    end
  end

  test "hostile wmbus: an endless DIFE chain stops after 10 DIFEs" do
    assert [%{data: %{desc: :unknown_dife_chain}}] = LibWmbus.Dib.parse_dib(<<0x84>> <> :binary.copy(<<0xFF>>, 100_000))
  end

  test "hostile wmbus: an endless VIFE chain stops after 10 VIFEs" do
    assert [%{data: %{desc: :unknown_vife_chain}}] = LibWmbus.Dib.parse_dib(<<0x04>> <> :binary.copy(<<0xFF>>, 100_000))
  end

  test "hostile wmbus: a plain-text length beyond the input is a truncated record" do
    assert [%{data: %{desc: :unknown_truncated_record}}] = LibWmbus.Dib.parse_dib(<<0x01, 0x7C, 0xFF, 0x41>>)
  end

  test "hostile wmbus: many tiny records are capped at 1000" do
    records = LibWmbus.Dib.parse_dib(:binary.copy(<<0x00, 0x00>>, 50_000))
    assert length(records) == 1001
    assert %{data: %{desc: :unknown_too_many_records}} = List.last(records)
  end

  test "hostile wmbus: an LVAR binary of 64 bytes and a 12-digit BCD with non-decimal digits" do
    assert [%{data: %{value: v}}] = LibWmbus.Dib.parse_dib(<<0x0D, 0x13, 0xF6>> <> :binary.copy(<<0xFF>>, 64))
    assert v == -0.001
    assert [%{data: %{value: nil}}] = LibWmbus.Dib.parse_dib(<<0x0E, 0x13, 0xAB, 0, 0, 0, 0, 0>>)
  end

  test "hostile wmbus: a NaN real is no value" do
    assert [%{data: %{value: nil}}] = LibWmbus.Dib.parse_dib(<<0x05, 0x13, 0, 0, 0xC0, 0x7F>>)
  end
end

defmodule TimexIntervalTest do
  use ExUnit.Case, async: true
  alias Timex.Interval

  test "enumerates from from in steps up to until (right open by default)" do
    i = Interval.new(from: ~U[2019-01-01 11:00:00Z], until: ~U[2019-01-01 13:00:00Z], step: [minutes: 60])
    assert Enum.to_list(i) == [~U[2019-01-01 11:00:00Z], ~U[2019-01-01 12:00:00Z]]
    closed = %{i | right_open: false}
    assert Enum.count(closed) == 3
    assert Enum.to_list(%{i | left_open: true}) == [~U[2019-01-01 12:00:00Z]]
    assert Enum.take(Interval.new(from: ~D[2024-01-30], until: [months: 3]), 2) == [~D[2024-01-30], ~D[2024-01-31]]
  end

  test "with zones: steps keep the zone, comparisons are by instant" do
    from = Timex.to_datetime(~U[2019-01-01 11:00:00Z], "Europe/Berlin")
    values = Enum.to_list(Interval.new(from: from, until: ~U[2019-01-01 13:00:00Z], step: [hours: 1]))
    assert Enum.map(values, &Timex.to_unix/1) == [1_546_340_400, 1_546_344_000]
    assert Enum.all?(values, &(&1.time_zone == "Europe/Berlin"))
  end

  test "halting early on a large interval works; enumerating it all raises" do
    huge = Interval.new(from: ~U[2000-01-01 00:00:00Z], until: ~U[2100-01-01 00:00:00Z], step: [seconds: 1])
    assert length(Enum.take(huge, 5)) == 5
    assert_raise ArgumentError, ~r/more than 10000 values/, fn -> Enum.map(huge, & &1) end
  end

  test "hostile interval: a forged struct with a zero step is refused" do
    forged = %{__struct__: Interval, from: ~U[2019-01-01 00:00:00Z], until: ~U[2019-01-02 00:00:00Z],
               left_open: false, right_open: true, step: [seconds: 0]}
    assert_raise ArgumentError, ~r/step/, fn -> Enum.to_list(forged) end
  end

  test "hostile interval: a forged struct with a negative or non-integer step is refused" do
    base = %{__struct__: Interval, from: ~U[2019-01-02 00:00:00Z], until: ~U[2019-01-01 00:00:00Z],
             left_open: false, right_open: false}
    assert_raise ArgumentError, fn -> Enum.to_list(Map.put(base, :step, seconds: -1)) end
    assert_raise ArgumentError, fn -> Enum.to_list(Map.put(base, :step, seconds: 1.5)) end
    assert_raise ArgumentError, fn -> Enum.to_list(Map.put(base, :step, :forever)) end
    assert_raise ArgumentError, fn -> Enum.to_list(Map.put(base, :step, eons: 1)) end
    assert_raise ArgumentError, fn -> Enum.to_list(Map.put(base, :step, years: 10_000_000_000)) end
  end

  test "hostile interval: forged from/until (missing fields, wrong types, huge years, other calendars) are refused" do
    step = [days: 1]
    good = ~U[2019-01-01 00:00:00Z]

    for from <- [%{__struct__: DateTime}, %{good | year: 10_000_000}, %{good | month: 13}, %{good | calendar: Evil},
                 %{good | time_zone: 5}, 5, nil, "2019-01-01", ~N[2019-01-01 00:00:00]] do
      forged = %{__struct__: Interval, from: from, until: good, left_open: false, right_open: true, step: step}
      assert_raise ArgumentError, fn -> Enum.to_list(forged) end
    end

    assert_raise ArgumentError, fn -> Enum.to_list(%{__struct__: Interval}) end
    assert_raise ArgumentError, fn -> Enum.to_list(%{__struct__: Interval, from: good, until: good, left_open: :x, right_open: true, step: step}) end
  end

  test "hostile interval: a giant legitimate interval stops at the step bound" do
    giant = Interval.new(from: ~D[0001-01-01], until: ~D[9999-12-31], step: [days: 1])
    assert_raise ArgumentError, ~r/more than 10000/, fn -> Enum.to_list(giant) end
  end
end

defmodule TimeSeriesTest do
  use ExUnit.Case, async: true

  defp opts do
    [x_access_path: [Access.elem(1), :measured_at], y_access_path: [Access.elem(0)],
     x_pre_calc_fun: &Timex.to_unix/1, x_post_calc_fun: &Timex.to_datetime/1,
     y_pre_calc_fun: fn %{value: value} -> value end, y_post_calc_fun: &%{value: &1, _interpolated: true}]
  end

  defp hourly(a, b) do
    Enum.map(Timex.Interval.new(from: Timex.shift(a, minutes: 60 - a.minute, seconds: -a.second), until: b, step: [hours: 1]),
             &{nil, [measured_at: &1]})
  end

  test "linear interpolation at each gap point, with the x and y post functions applied" do
    points = [{%{value: 3}, [measured_at: ~U[2019-01-01 10:34:11Z]]}, {%{value: 6}, [measured_at: ~U[2019-01-01 12:34:56Z]]}]
    [a, g1, g2, b] = TimeSeries.fill_gaps(points, &hourly/2, :linear, opts())
    assert a == hd(points) and b == List.last(points)
    assert {%{value: v1, _interpolated: true}, [measured_at: ~U[2019-01-01 11:00:00Z]]} = g1
    assert {%{value: v2, _interpolated: true}, [measured_at: ~U[2019-01-01 12:00:00Z]]} = g2
    assert Float.round(v1, 3) == 3.641 and Float.round(v2, 3) == 5.132
  end

  test "plain numbers with identity pre/post functions; one point or none gives the input" do
    o = [x_access_path: [:x], y_access_path: [:y]]
    gap = fn a, b -> if b - a > 1, do: Enum.map((a + 1)..(b - 1), &%{x: &1, y: nil}), else: [] end
    assert TimeSeries.fill_gaps([%{x: 0, y: 0}, %{x: 4, y: 8}], gap, :linear, o) ==
             [%{x: 0, y: 0}, %{x: 1, y: 2.0}, %{x: 2, y: 4.0}, %{x: 3, y: 6.0}, %{x: 4, y: 8}]
    assert TimeSeries.fill_gaps([%{x: 0, y: 0}], gap, :linear, o) == [%{x: 0, y: 0}]
    assert TimeSeries.fill_gaps([], gap, :linear, o) == []
  end

  test "hostile fill_gaps: a gap function returning more than the bound raises" do
    o = [x_access_path: [:x], y_access_path: [:y]]
    gap = fn _, _ -> List.duplicate(%{x: 1, y: nil}, 20_000) end
    assert_raise ArgumentError, ~r/at most 10000/, fn -> TimeSeries.fill_gaps([%{x: 0, y: 0}, %{x: 2, y: 2}], gap, :linear, o) end
  end

  test "hostile fill_gaps: a gap function returning a non-list, an unknown method, bad options raise ArgumentError" do
    o = [x_access_path: [:x], y_access_path: [:y]]
    pts = [%{x: 0, y: 0}, %{x: 2, y: 2}]
    assert_raise ArgumentError, fn -> TimeSeries.fill_gaps(pts, fn _, _ -> :nope end, :linear, o) end
    assert_raise ArgumentError, fn -> TimeSeries.fill_gaps(pts, fn _, _ -> [] end, :cubic, o) end
    assert_raise ArgumentError, fn -> TimeSeries.fill_gaps(pts, fn _, _ -> [] end, :linear, Keyword.put(o, :x_pre_calc_fun, 5)) end
    assert_raise ArgumentError, fn -> TimeSeries.fill_gaps(:points, fn _, _ -> [] end, :linear, o) end
  end
end

defmodule VectorSemanticsTest do
  use ExUnit.Case, async: true

  test "json_decode errors have the platform's shape" do
    assert Fieldline.Json.platform_decode("{invalid") == {:error, {:invalid, "i", 1}}
    assert Fieldline.Json.platform_decode(~s({"a": 1}x)) == {:error, {:invalid, "x", 8}}
    assert Fieldline.Json.platform_decode(~s([1, 2)) == {:error, {:invalid, "", 5}}
    assert Fieldline.Json.platform_decode(~s({"é": ü})) == {:error, {:invalid, "ü", 7}}
    assert Fieldline.Json.platform_decode(~s({"a": [1]})) == {:ok, %{"a" => [1]}}
  end

  test "a [lon, lat] location list is stored like a {lon, lat} tuple" do
    assert {:ok, [{_, _, [7.5, 51.2], _}]} = Fieldline.Normalize.readings({%{a: 1}, [location: [7.5, 51.2]]})
    assert {:ok, [{_, _, [7.5, 51.2], _}]} = Fieldline.Normalize.readings({%{a: 1}, [location: {7.5, 51.2}]})
    assert {:error, "location must be" <> _} = Fieldline.Normalize.readings({%{a: 1}, [location: [7.5]]})
  end
end
