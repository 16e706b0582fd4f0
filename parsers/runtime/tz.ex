defmodule Fieldline.TzDb do
  @moduledoc """
  A `Calendar.TimeZoneDatabase` over the system's IANA data (`/usr/share/zoneinfo`, TZif v2+): the
  64-bit transition table, and past its end the POSIX TZ rule in the file's footer (`Mm.w.d` rules).
  Zones are parsed once per worker and kept in `:persistent_term`.
  """
  @behaviour Calendar.TimeZoneDatabase

  @zoneinfo "/usr/share/zoneinfo"
  @epoch_gregorian_seconds 62_167_219_200

  @impl true
  def time_zone_period_from_utc_iso_days(iso_days, zone) do
    with {:ok, tz} <- zone(zone) do
      {:ok, period_at(tz, iso_days_to_unix(iso_days))}
    end
  end

  @impl true
  def time_zone_periods_from_wall_datetime(%NaiveDateTime{} = ndt, zone) do
    with {:ok, tz} <- zone(zone) do
      wall = ndt |> NaiveDateTime.to_erl() |> :calendar.datetime_to_gregorian_seconds()
      wall = wall - @epoch_gregorian_seconds
      # Candidate periods: those in force a day either side; keep the ones whose wall time matches.
      candidates =
        [wall - 86_400, wall, wall + 86_400]
        |> Enum.flat_map(fn t -> [period_at(tz, t - 1), period_at(tz, t)] end)
        |> Enum.uniq()
        |> Enum.filter(fn p -> period_at(tz, wall - total(p)) == p end)

      case candidates do
        [p] -> {:ok, p}
        [a, b | _] -> {:ambiguous, earlier(a, b), later(a, b)}
        [] -> gap(tz, wall)
      end
    end
  end

  defp earlier(a, b), do: if(total(a) >= total(b), do: a, else: b)
  defp later(a, b), do: if(total(a) >= total(b), do: b, else: a)

  # Wall time skipped by a forward transition at UTC instant T: the gap runs from T + total(before)
  # to T + total(after) in wall time. T is found by binary search between the two candidate instants.
  defp gap(tz, wall) do
    before = period_at(tz, wall - 86_400)
    after_p = period_at(tz, wall + 86_400)
    t = first_instant(tz, after_p, wall - total(after_p), wall - total(before))
    {:gap, {before, unix_to_naive(t + total(before))}, {after_p, unix_to_naive(t + total(after_p))}}
  end

  defp first_instant(_tz, _p, lo, hi) when lo >= hi, do: lo

  defp first_instant(tz, p, lo, hi) do
    mid = div(lo + hi, 2)
    if period_at(tz, mid) == p, do: first_instant(tz, p, lo, mid), else: first_instant(tz, p, mid + 1, hi)
  end

  defp total(%{utc_offset: u, std_offset: s}), do: u + s

  defp iso_days_to_unix({days, {parts, ppd}}) do
    (days - 719_528) * 86_400 + div(parts * 86_400, ppd)
  end

  defp unix_to_naive(t), do: NaiveDateTime.add(~N[1970-01-01 00:00:00], t, :second)

  # ---- loading ----

  defp zone("Etc/UTC"), do: {:ok, :utc}
  defp zone("UTC"), do: {:ok, :utc}

  defp zone(name) when is_binary(name) do
    key = {__MODULE__, name}

    case :persistent_term.get(key, nil) do
      nil ->
        with true <- valid_name?(name),
             {:ok, bytes} <- File.read(Path.join(@zoneinfo, name)),
             {:ok, tz} <- parse_tzif(bytes) do
          :persistent_term.put(key, tz)
          {:ok, tz}
        else
          _ -> {:error, :time_zone_not_found}
        end

      tz ->
        {:ok, tz}
    end
  end

  defp zone(_), do: {:error, :time_zone_not_found}

  defp valid_name?(name) do
    byte_size(name) < 64 and Regex.match?(~r/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/, name)
  end

  defp parse_tzif(<<"TZif", version, _::binary-size(15), rest::binary>> = _bytes) when version in [?2, ?3, ?4] do
    # Skip the 32-bit block; read the 64-bit one and the footer.
    {_, after_v1} = block(rest, 4)
    <<"TZif", _, _::binary-size(15), v2::binary>> = after_v1
    {tz, footer_rest} = block(v2, 8)
    footer = footer_rest |> String.split("\n", trim: true) |> List.first()
    {:ok, Map.put(tz, :rule, footer && parse_posix(footer))}
  rescue
    _ -> :error
  end

  defp parse_tzif(_), do: :error

  defp block(<<isut::32, isstd::32, leap::32, timecnt::32, typecnt::32, charcnt::32, rest::binary>>, tsize) do
    tbits = tsize * 8
    <<times::binary-size(timecnt * tsize), idxs::binary-size(timecnt), types::binary-size(typecnt * 6),
      chars::binary-size(charcnt), _leaps::binary-size(leap * (tsize + 4)), _::binary-size(isstd),
      _::binary-size(isut), rest::binary>> = rest

    times = for <<t::signed-size(tbits) <- times>>, do: t
    idxs = for <<i <- idxs>>, do: i

    types =
      for <<off::signed-32, dst, abbr <- types>> do
        name = chars |> binary_part(abbr, byte_size(chars) - abbr) |> String.split(<<0>>) |> hd()
        {off, dst == 1, name}
      end

    types = List.to_tuple(types)

    transitions =
      Enum.zip(times, idxs)
      |> Enum.map(fn {t, i} -> {t, elem(types, i)} end)
      |> with_std_offsets(elem(types, 0))
      |> List.to_tuple()

    first = elem(types, 0) |> to_period(0)
    {%{transitions: transitions, first: first}, rest}
  end

  # A DST period's std_offset is its offset minus the standard offset in force before it.
  defp with_std_offsets(transitions, {first_off, _, _}) do
    {periods, _} =
      Enum.map_reduce(transitions, first_off, fn {t, {off, dst, name}}, std ->
        if dst do
          dst_part = if off - std > 0, do: off - std, else: 3600
          {{t, %{utc_offset: off - dst_part, std_offset: dst_part, zone_abbr: name}}, std}
        else
          {{t, %{utc_offset: off, std_offset: 0, zone_abbr: name}}, off}
        end
      end)

    periods
  end

  defp to_period({off, _dst, name}, std), do: %{utc_offset: off - std, std_offset: std, zone_abbr: name}

  # ---- lookup ----

  defp period_at(:utc, _t), do: %{utc_offset: 0, std_offset: 0, zone_abbr: "UTC"}

  defp period_at(%{transitions: trans, first: first, rule: rule}, t) do
    n = tuple_size(trans)

    cond do
      n == 0 -> rule_period(rule, t) || first
      t < elem(elem(trans, 0), 0) -> first
      t >= elem(elem(trans, n - 1), 0) and rule != nil -> rule_period(rule, t) || elem(elem(trans, n - 1), 1)
      true -> elem(elem(trans, search(trans, t, 0, n - 1)), 1)
    end
  end

  # The last index whose transition time is <= t.
  defp search(_trans, _t, lo, hi) when lo >= hi, do: lo

  defp search(trans, t, lo, hi) do
    mid = div(lo + hi + 1, 2)
    if elem(elem(trans, mid), 0) <= t, do: search(trans, t, mid, hi), else: search(trans, t, lo, mid - 1)
  end

  # ---- POSIX TZ rules (the footer), e.g. "CET-1CEST,M3.5.0,M10.5.0/3" ----

  defp parse_posix(text) do
    with {:ok, std_name, rest} <- name(text),
         {:ok, std_off, rest} <- offset(rest) do
      std = %{utc_offset: -std_off, std_offset: 0, zone_abbr: std_name}

      case rest do
        "" ->
          %{std: std, dst: nil}

        _ ->
          with {:ok, dst_name, rest} <- name(rest) do
            {dst_off, rest} =
              case offset(rest) do
                {:ok, o, r} -> {o, r}
                _ -> {std_off - 3600, rest}
              end

            dst = %{utc_offset: -std_off, std_offset: std_off - dst_off, zone_abbr: dst_name}

            case String.split(rest, ",", trim: true) do
              [start, stop] -> %{std: std, dst: dst, start: date_rule(start), stop: date_rule(stop)}
              _ -> %{std: std, dst: nil}
            end
          else
            _ -> %{std: std, dst: nil}
          end
      end
    else
      _ -> nil
    end
  end

  defp name("<" <> rest) do
    [n, rest] = String.split(rest, ">", parts: 2)
    {:ok, n, rest}
  end

  defp name(text) do
    case Regex.run(~r/^([A-Za-z]{3,})(.*)$/, text) do
      [_, n, rest] -> {:ok, n, rest}
      _ -> :error
    end
  end

  defp offset(text) do
    case Regex.run(~r/^([+-]?)(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?(.*)$/, text) do
      [_, sign, h, m, s, rest] ->
        secs = String.to_integer(h) * 3600 + int(m) * 60 + int(s)
        {:ok, if(sign == "-", do: -secs, else: secs), rest}

      _ ->
        :error
    end
  end

  defp int(""), do: 0
  defp int(nil), do: 0
  defp int(s), do: String.to_integer(s)

  defp date_rule(text) do
    [date | time] = String.split(text, "/", parts: 2)
    at = case time do
      [t] -> with {:ok, o, _} <- offset(t), do: o, else: (_ -> 7200)
      [] -> 7200
    end

    case Regex.run(~r/^M(\d+)\.(\d)\.(\d)$/, date) do
      [_, m, w, d] -> {:m, String.to_integer(m), String.to_integer(w), String.to_integer(d), at}
      _ -> nil
    end
  end

  defp rule_period(nil, _t), do: nil
  defp rule_period(%{std: std, dst: nil}, _t), do: std
  defp rule_period(%{start: nil}, _t), do: nil
  defp rule_period(%{stop: nil}, _t), do: nil

  defp rule_period(%{std: std, dst: dst} = rule, t) do
    {{year, _, _}, _} = :calendar.gregorian_seconds_to_datetime(t + @epoch_gregorian_seconds)
    # Transition instants in UTC: start is given in standard wall time, stop in daylight wall time.
    start = rule_instant(rule.start, year) - std.utc_offset
    stop = rule_instant(rule.stop, year) - (dst.utc_offset + dst.std_offset)

    in_dst = if start < stop, do: t >= start and t < stop, else: t >= start or t < stop
    if in_dst, do: dst, else: std
  end

  # Seconds since the epoch (wall clock, as if UTC) of "day d of week w of month m" at `at`.
  defp rule_instant({:m, month, week, weekday, at}, year) do
    first = :calendar.day_of_the_week(year, month, 1) |> rem(7)
    day = 1 + rem(weekday - first + 7, 7) + (week - 1) * 7
    last = :calendar.last_day_of_the_month(year, month)
    day = if day > last, do: day - 7 * div(day - last + 6, 7), else: day
    :calendar.datetime_to_gregorian_seconds({{year, month, day}, {0, 0, 0}}) - @epoch_gregorian_seconds + at
  end
end
