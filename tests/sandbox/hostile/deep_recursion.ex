defmodule Parser do
  use Platform.Parsing.Behaviour
  # Body recursion that never ends. The BEAM grows a deep stack slowly (each growth copies the live
  # stack: measured here, a 4 M-word heap cap is still not reached after 5 s), so the per-packet
  # deadline is what stops it.
  def parse(_payload, _meta), do: %{depth: down(1, 2, 3, 4, 5, 6, 7, 8)}
  defp down(a, b, c, d, e, f, g, h), do: a + b + c + d + e + f + g + h + down(b, c, d, e, f, g, h, a)
end
