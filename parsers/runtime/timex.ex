defmodule Timex do
  @moduledoc """
  The commonly used part of the Timex library, for parsers written against it (parser-contract.md):
  now, shift, to_datetime with IANA zones, unix conversions, format (Timex `{...}` directives and
  `:strftime`), diff, comparisons, beginning/end of day. Backed by `Fieldline.TzDb`.
  """

  def now, do: DateTime.utc_now()
  def now(zone), do: to_datetime(DateTime.utc_now(), zone)
  def today, do: Date.utc_today()

  def to_datetime(value, zone \\ "Etc/UTC")

  def to_datetime(%DateTime{} = dt, zone) do
    case DateTime.shift_zone(dt, zone) do
      {:ok, shifted} -> shifted
      {:error, reason} -> {:error, reason}
    end
  end

  def to_datetime(%NaiveDateTime{} = ndt, zone) do
    case DateTime.from_naive(ndt, zone) do
      {:ok, dt} -> dt
      {:ambiguous, first, _} -> first
      {:gap, _, after_gap} -> after_gap
      {:error, reason} -> {:error, reason}
    end
  end

  def to_datetime(%Date{} = d, zone), do: to_datetime(NaiveDateTime.new!(d, ~T[00:00:00]), zone)
  # Unix seconds (what `x_post_calc_fun: &Timex.to_datetime/1` gets back after `&Timex.to_unix/1`).
  def to_datetime(seconds, zone) when is_integer(seconds), do: to_datetime(DateTime.from_unix!(seconds), zone)
  def to_datetime({{_, _, _}, {_, _, _}} = erl, zone), do: to_datetime(NaiveDateTime.from_erl!(erl), zone)

  def to_naive_datetime(%DateTime{} = dt), do: DateTime.to_naive(dt)
  def to_naive_datetime(%NaiveDateTime{} = ndt), do: ndt

  def to_unix(%DateTime{} = dt), do: DateTime.to_unix(dt)
  def to_unix(%NaiveDateTime{} = ndt), do: ndt |> DateTime.from_naive!("Etc/UTC") |> DateTime.to_unix()

  def from_unix(value, unit \\ :second), do: DateTime.from_unix!(value, normalize_unit(unit))

  def shift(%Date{} = d, opts), do: d |> to_datetime() |> shift(opts) |> DateTime.to_date()

  def shift(value, opts) when is_list(opts) do
    Enum.reduce(opts, value, fn
      {:years, n}, acc -> shift_months(acc, n * 12)
      {:months, n}, acc -> shift_months(acc, n)
      {:weeks, n}, acc -> add(acc, n * 7 * 86_400, :second)
      {:days, n}, acc -> add(acc, n * 86_400, :second)
      {:hours, n}, acc -> add(acc, n * 3600, :second)
      {:minutes, n}, acc -> add(acc, n * 60, :second)
      {:seconds, n}, acc -> add(acc, n, :second)
      {:milliseconds, n}, acc -> add(acc, n, :millisecond)
      {:microseconds, n}, acc -> add(acc, n, :microsecond)
      {unit, _}, _ -> {:error, {:invalid_shift, unit}}
    end)
  end

  defp add(%DateTime{} = dt, n, unit), do: DateTime.add(dt, n, unit, Fieldline.TzDb)
  defp add(%NaiveDateTime{} = ndt, n, unit), do: NaiveDateTime.add(ndt, n, unit)
  defp add(other, _, _), do: other

  defp shift_months(value, n) do
    total = value.year * 12 + (value.month - 1) + n
    year = div(total, 12)
    month = rem(total, 12) + 1
    day = min(value.day, :calendar.last_day_of_the_month(year, month))
    %{value | year: year, month: month, day: day}
  end

  def diff(a, b, unit \\ :microseconds) do
    us = to_us(a) - to_us(b)

    case unit do
      u when u in [:microseconds, :microsecond] -> us
      u when u in [:milliseconds, :millisecond] -> div(us, 1000)
      u when u in [:seconds, :second] -> div(us, 1_000_000)
      u when u in [:minutes, :minute] -> div(us, 60_000_000)
      u when u in [:hours, :hour] -> div(us, 3_600_000_000)
      u when u in [:days, :day] -> div(us, 86_400_000_000)
      u when u in [:weeks, :week] -> div(us, 604_800_000_000)
    end
  end

  defp to_us(%DateTime{} = dt), do: DateTime.to_unix(dt, :microsecond)
  defp to_us(%NaiveDateTime{} = ndt), do: ndt |> DateTime.from_naive!("Etc/UTC") |> DateTime.to_unix(:microsecond)
  defp to_us(%Date{} = d), do: to_us(NaiveDateTime.new!(d, ~T[00:00:00]))

  def compare(a, b) do
    d = to_us(a) - to_us(b)
    cond do
      d < 0 -> -1
      d > 0 -> 1
      true -> 0
    end
  end

  def before?(a, b), do: compare(a, b) < 0
  def after?(a, b), do: compare(a, b) > 0
  def equal?(a, b), do: compare(a, b) == 0

  def beginning_of_day(%DateTime{} = dt), do: %{dt | hour: 0, minute: 0, second: 0, microsecond: {0, 0}}
  def beginning_of_day(%NaiveDateTime{} = dt), do: %{dt | hour: 0, minute: 0, second: 0, microsecond: {0, 0}}
  def end_of_day(%DateTime{} = dt), do: %{dt | hour: 23, minute: 59, second: 59, microsecond: {999_999, 6}}
  def end_of_day(%NaiveDateTime{} = dt), do: %{dt | hour: 23, minute: 59, second: 59, microsecond: {999_999, 6}}

  def is_valid?(%DateTime{}), do: true
  def is_valid?(%NaiveDateTime{}), do: true
  def is_valid?(%Date{}), do: true
  def is_valid?(_), do: false

  def format(value, format_string, formatter \\ :default)

  def format(value, format_string, :strftime) do
    {:ok, Calendar.strftime(value, format_string)}
  rescue
    e -> {:error, Exception.message(e)}
  end

  def format(value, format_string, _default) do
    parts = Regex.split(~r/\{[^}]*\}/, format_string, include_captures: true, trim: true)
    {:ok, Enum.map_join(parts, &directive(value, &1))}
  rescue
    e -> {:error, Exception.message(e)}
  end

  def format!(value, format_string, formatter \\ :default) do
    case format(value, format_string, formatter) do
      {:ok, s} -> s
      {:error, reason} -> raise ArgumentError, "Timex.format!: #{inspect(reason)}"
    end
  end

  defp directive(v, "{ISO:Extended}"), do: iso(v)
  defp directive(v, "{ISO:Extended:Z}"), do: v |> to_datetime("Etc/UTC") |> DateTime.to_iso8601()
  defp directive(v, "{ISOdate}"), do: v |> Map.take([:year, :month, :day, :calendar]) |> then(&Date.new!(&1.year, &1.month, &1.day)) |> Date.to_iso8601()
  defp directive(v, "{ISOtime}"), do: Time.new!(v.hour, v.minute, v.second) |> Time.to_iso8601()
  defp directive(v, "{YYYY}"), do: Integer.to_string(v.year)
  defp directive(v, "{YY}"), do: pad(rem(v.year, 100))
  defp directive(v, "{M}"), do: Integer.to_string(v.month)
  defp directive(v, "{0M}"), do: pad(v.month)
  defp directive(v, "{D}"), do: Integer.to_string(v.day)
  defp directive(v, "{0D}"), do: pad(v.day)
  defp directive(v, "{h24}"), do: pad(v.hour)
  defp directive(v, "{0h24}"), do: pad(v.hour)
  defp directive(v, "{h12}"), do: pad(rem(v.hour + 11, 12) + 1)
  defp directive(v, "{m}"), do: pad(v.minute)
  defp directive(v, "{0m}"), do: pad(v.minute)
  defp directive(v, "{s}"), do: pad(v.second)
  defp directive(v, "{0s}"), do: pad(v.second)
  defp directive(v, "{Zabbr}"), do: Map.get(v, :zone_abbr, "UTC")
  defp directive(v, "{Zname}"), do: Map.get(v, :time_zone, "Etc/UTC")
  defp directive(v, "{Z:}"), do: offset(v, ":")
  defp directive(v, "{Z}"), do: offset(v, "")
  defp directive(_v, "{" <> _ = unknown), do: raise(ArgumentError, "unsupported Timex directive #{unknown}")
  defp directive(_v, literal), do: literal

  defp iso(%DateTime{} = dt), do: DateTime.to_iso8601(dt)
  defp iso(%NaiveDateTime{} = dt), do: NaiveDateTime.to_iso8601(dt)
  defp iso(%Date{} = d), do: Date.to_iso8601(d)

  defp offset(v, sep) do
    total = Map.get(v, :utc_offset, 0) + Map.get(v, :std_offset, 0)
    sign = if total < 0, do: "-", else: "+"
    a = abs(total)
    sign <> pad(div(a, 3600)) <> sep <> pad(rem(div(a, 60), 60))
  end

  defp pad(n), do: n |> Integer.to_string() |> String.pad_leading(2, "0")

  defp normalize_unit(u) when u in [:seconds, :second], do: :second
  defp normalize_unit(u) when u in [:milliseconds, :millisecond], do: :millisecond
  defp normalize_unit(u) when u in [:microseconds, :microsecond], do: :microsecond
  defp normalize_unit(u) when u in [:nanoseconds, :nanosecond], do: :nanosecond
  defp normalize_unit(u), do: u
end

defmodule Timex.Interval do
  @moduledoc """
  Timex.Interval basics: `new/1` (`from:`, `until:` a value or a shift keyword list, `left_open:`,
  `right_open:`, `step:`), `duration/2`, `contains?/2`, and enumeration (`Enum.map(interval, ...)`)
  from `from` in `step`s (default `[days: 1]`) up to `until` (excluded unless `right_open: false`;
  `from` excluded when `left_open: true`).

  A parser can forge `%{__struct__: Timex.Interval, ...}`, so enumeration (`Enumerable.Timex.Interval`)
  trusts no field: `from`/`until` must be ISO-calendar `DateTime`, `NaiveDateTime` or `Date` values of
  the same kind with years in 0..9999, `step` a non-empty keyword list of positive integer amounts of
  known units, and an interval yields at most 10000 values (more raises `ArgumentError`).
  """
  defstruct from: nil, until: nil, left_open: false, right_open: true, step: [days: 1]

  @max_steps 10_000
  @step_units [:years, :months, :weeks, :days, :hours, :minutes, :seconds, :milliseconds, :microseconds]
  @max_amount 1_000_000

  def new(opts) do
    %__MODULE__{
      from: Keyword.fetch!(opts, :from),
      until: until(opts),
      left_open: Keyword.get(opts, :left_open, false),
      right_open: Keyword.get(opts, :right_open, true),
      step: Keyword.get(opts, :step, days: 1)
    }
  end

  defp until(opts) do
    case Keyword.fetch!(opts, :until) do
      shift when is_list(shift) -> Timex.shift(Keyword.fetch!(opts, :from), shift)
      value -> value
    end
  end

  def duration(%__MODULE__{from: from, until: until}, unit), do: Timex.diff(until, from, unit)

  def contains?(%__MODULE__{from: from, until: until}, value),
    do: Timex.compare(value, from) >= 0 and Timex.compare(value, until) < 0

  @doc "The most values one interval yields when enumerated."
  def max_steps, do: @max_steps

  @doc false
  # Enumerable.Timex.Interval: validates a (possibly forged) interval, then folds over its values.
  def reduce(interval, acc, fun) do
    %{from: from, until: until, left_open: left_open, right_open: right_open, step: step} = validate!(interval)
    first = if left_open, do: Timex.shift(from, step), else: from
    walk(first, until, right_open, step, acc, fun, 0)
  end

  defp walk(_value, _until, _right_open, _step, {:halt, acc}, _fun, _n), do: {:halted, acc}
  defp walk(value, until, right_open, step, {:suspend, acc}, fun, n),
    do: {:suspended, acc, &walk(value, until, right_open, step, &1, fun, n)}

  defp walk(value, until, right_open, step, {:cont, acc}, fun, n) do
    c = Timex.compare(value, until)

    cond do
      c > 0 or (c == 0 and right_open) ->
        {:done, acc}

      n >= @max_steps ->
        raise ArgumentError, "Timex.Interval yields more than #{@max_steps} values"

      true ->
        walk(Timex.shift(value, step), until, right_open, step, fun.(value, acc), fun, n + 1)
    end
  end

  defp validate!(%{__struct__: __MODULE__, from: from, until: until, left_open: lo, right_open: ro, step: step})
       when is_boolean(lo) and is_boolean(ro) do
    unless same_kind?(from, until) and valid_point?(from) and valid_point?(until),
      do: raise(ArgumentError, "Timex.Interval: from and until must be valid dates or datetimes of the same kind")

    unless valid_step?(step),
      do: raise(ArgumentError, "Timex.Interval: step must be a keyword list of positive integer amounts of #{inspect(@step_units)}")

    %{from: from, until: until, left_open: lo, right_open: ro, step: step}
  end

  defp validate!(_), do: raise(ArgumentError, "not a valid Timex.Interval")

  defp same_kind?(%DateTime{}, %DateTime{}), do: true
  defp same_kind?(%NaiveDateTime{}, %NaiveDateTime{}), do: true
  defp same_kind?(%Date{}, %Date{}), do: true
  defp same_kind?(_, _), do: false

  # Rebuilding the value checks every field (a forged struct with bad fields fails here).
  defp valid_point?(%DateTime{calendar: Calendar.ISO, year: y} = dt) when is_integer(y) and y in 0..9999 do
    with true <- is_binary(dt.time_zone) and is_integer(dt.utc_offset) and is_integer(dt.std_offset),
         {:ok, _} <- NaiveDateTime.new(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, dt.microsecond) do
      true
    else
      _ -> false
    end
  rescue
    _ -> false
  end

  defp valid_point?(%NaiveDateTime{calendar: Calendar.ISO, year: y} = n) when is_integer(y) and y in 0..9999 do
    match?({:ok, _}, NaiveDateTime.new(n.year, n.month, n.day, n.hour, n.minute, n.second, n.microsecond))
  rescue
    _ -> false
  end

  defp valid_point?(%Date{calendar: Calendar.ISO, year: y} = d) when is_integer(y) and y in 0..9999 do
    match?({:ok, _}, Date.new(d.year, d.month, d.day))
  rescue
    _ -> false
  end

  defp valid_point?(_), do: false

  defp valid_step?([_ | _] = step) do
    Enum.all?(step, fn
      {unit, n} -> unit in @step_units and is_integer(n) and n > 0 and n <= @max_amount
      _ -> false
    end)
  end

  defp valid_step?(_), do: false
end

defimpl Enumerable, for: Timex.Interval do
  def reduce(interval, acc, fun), do: Timex.Interval.reduce(interval, acc, fun)
  def count(_interval), do: {:error, __MODULE__}
  def member?(_interval, _value), do: {:error, __MODULE__}
  def slice(_interval), do: {:error, __MODULE__}
end
