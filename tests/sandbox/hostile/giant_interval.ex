defmodule Parser do
  use Platform.Parsing.Behaviour
  # A legitimate interval with three billion steps: enumeration stops at the runtime's bound.
  def parse(_payload, _meta) do
    interval = Timex.Interval.new(from: ~U[2000-01-01 00:00:00Z], until: ~U[2100-01-01 00:00:00Z], step: [seconds: 1])
    %{points: length(Enum.map(interval, &Timex.to_unix/1))}
  end
end
