defmodule TimeSeries do
  @moduledoc """
  `TimeSeries.fill_gaps/4`, as the original platform gives it to parsers (parser-contract.md):
  inserts points into the gaps between consecutive points and interpolates their values.

      TimeSeries.fill_gaps(points, gap_fun, :linear,
        x_access_path: [Access.elem(1), :measured_at], y_access_path: [Access.elem(0)],
        x_pre_calc_fun: &Timex.to_unix/1, x_post_calc_fun: &Timex.to_datetime/1,
        y_pre_calc_fun: fn %{value: v} -> v end, y_post_calc_fun: &%{value: &1, _interpolated: true})

  For each pair of consecutive points `a`, `b`, `gap_fun.(x_a, x_b)` (the raw x values, read with
  `get_in(point, x_access_path)`) returns the points to insert. Each inserted point gets
  x = `x_post_calc_fun.(x_pre_calc_fun.(its x))` and y = `y_post_calc_fun.(y)`, where y is the
  linear interpolation at its x between `a` and `b` (x and y as the pre-calc functions return them;
  when `a` and `b` share an x, y is `a`'s). The result is the input points in their order with the
  inserted points after the point they follow. The pre/post functions default to the identity.

  Bounded: at most 10000 points in all (more raises `ArgumentError`); `gap_fun` must return a
  list.
  """

  @max_points 10_000

  @doc "The most points fill_gaps/4 returns."
  def max_points, do: @max_points

  def fill_gaps(points, gap_fun, method, opts \\ [])

  def fill_gaps(points, gap_fun, :linear, opts) when is_list(points) and is_function(gap_fun, 2) and is_list(opts) do
    if length(points) > @max_points, do: too_many()

    o = %{
      gap: gap_fun,
      x_path: Keyword.fetch!(opts, :x_access_path),
      y_path: Keyword.fetch!(opts, :y_access_path),
      x_pre: fun1(opts, :x_pre_calc_fun),
      x_post: fun1(opts, :x_post_calc_fun),
      y_pre: fun1(opts, :y_pre_calc_fun),
      y_post: fun1(opts, :y_post_calc_fun)
    }

    case points do
      [] -> []
      [first | rest] -> fill(first, rest, o, [first], 1)
    end
  end

  def fill_gaps(_points, _gap_fun, method, _opts) when method != :linear,
    do: raise(ArgumentError, "TimeSeries.fill_gaps: unsupported method #{inspect(method, limit: 3)} (only :linear)")

  def fill_gaps(_points, _gap_fun, _method, _opts),
    do: raise(ArgumentError, "TimeSeries.fill_gaps expects a list of points, a 2-arity gap function and keyword options")

  defp fun1(opts, key) do
    case Keyword.get(opts, key) do
      nil -> fn v -> v end
      f when is_function(f, 1) -> f
      _ -> raise ArgumentError, "TimeSeries.fill_gaps: #{key} must be a 1-arity function"
    end
  end

  defp too_many, do: raise(ArgumentError, "TimeSeries.fill_gaps returns at most #{@max_points} points")

  defp fill(_prev, [], _o, acc, _count), do: Enum.reverse(acc)

  defp fill(a, [b | rest], o, acc, count) do
    raw_xa = get_in(a, o.x_path)
    raw_xb = get_in(b, o.x_path)

    gaps =
      case o.gap.(raw_xa, raw_xb) do
        list when is_list(list) -> list
        other -> raise ArgumentError, "TimeSeries.fill_gaps: the gap function must return a list, got #{inspect(other, limit: 3)}"
      end

    count = count + length(gaps) + 1
    if count > @max_points, do: too_many()

    xa = o.x_pre.(raw_xa)
    xb = o.x_pre.(raw_xb)
    ya = o.y_pre.(get_in(a, o.y_path))
    yb = o.y_pre.(get_in(b, o.y_path))

    acc =
      Enum.reduce(gaps, acc, fn gap, acc ->
        x = o.x_pre.(get_in(gap, o.x_path))
        y = if xb == xa, do: ya, else: ya + (yb - ya) * (x - xa) / (xb - xa)

        point =
          gap
          |> put_in(o.x_path, o.x_post.(x))
          |> put_in(o.y_path, o.y_post.(y))

        [point | acc]
      end)

    fill(b, rest, o, [b | acc], count)
  end
end
