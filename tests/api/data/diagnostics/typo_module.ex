defmodule Parser do
  def parse(p, _meta) do
    x = 1
    Strng.upcase(p)
  end
end
