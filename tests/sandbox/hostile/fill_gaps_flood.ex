defmodule Parser do
  use Platform.Parsing.Behaviour
  # A gap function that asks for 50000 points between two readings.
  def parse(_payload, _meta) do
    points = [%{x: 0, y: 0}, %{x: 1, y: 1}]
    gaps = fn _, _ -> List.duplicate(%{x: 0.5, y: nil}, 50_000) end
    %{points: length(TimeSeries.fill_gaps(points, gaps, :linear, x_access_path: [:x], y_access_path: [:y]))}
  end
end
