defmodule Fieldline.Runtime do
  @moduledoc "Helpers that compiled parser code calls in place of forms the sandbox rewrites."

  @doc """
  `expr.field` in parser code: map (and struct) field access only. In plain Elixir the same syntax on
  an atom calls a function, which would let a variable act as a module; here it raises instead.
  """
  def field!(%{} = map, key) do
    case map do
      %{^key => value} -> value
      _ -> raise KeyError, key: key, term: map
    end
  end

  def field!(other, key) do
    raise ArgumentError, "cannot access field #{inspect(key)} on #{inspect(other, limit: 5)}: not a map"
  end

  @doc """
  The value it is given. `Fieldline.Compiler` wraps the last call of each parser function body in
  it: a call in tail position replaces its caller's stack frame, so an error raised there would name
  no line of the parser; wrapped, the frame (and the call's line) stays on the stack.
  """
  def returned(value), do: value
end
