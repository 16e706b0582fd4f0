defmodule Fieldline.AllowList do
  @moduledoc """
  The language layer of the sandbox: before a parser is stored, tested or run, its AST is checked
  against an allow-list. Every remote call must name an allowed module (statically: an alias or an
  atom, never a variable) and a function that module allows; local calls, special forms and module
  attributes are checked against deny-lists. Violations name the line and the call.

  The runtime closes the one remaining dynamic form: `expr.field` (no parentheses) is rewritten by
  `Fieldline.Compiler` into a map-only access, so no variable can ever act as a module.
  """

  # Elixir modules whose every function a parser may call, minus the listed ones.
  @open_modules %{
    Kernel => [:apply, :spawn, :spawn_link, :spawn_monitor, :send, :binding, :dbg],
    String => [:to_atom],
    List => [:to_atom],
    Map => [],
    Enum => [],
    Keyword => [],
    Integer => [],
    Float => [],
    Tuple => [],
    Base => [],
    Bitwise => [],
    Access => [],
    Regex => [],
    DateTime => [],
    NaiveDateTime => [],
    Date => [],
    Time => [],
    Calendar => [:put_time_zone_database],
    Calendar.ISO => [],
    Stream => [],
    Range => [],
    MapSet => [],
    Timex => [],
    Timex.Interval => [],
    Timex.Duration => [],
    Platform.Parsing.Behaviour => [],
    Fieldline.Json => [],
    # Standard exceptions: raising one is how a parser reports a payload it cannot read.
    ArgumentError => [],
    RuntimeError => [],
    KeyError => [],
    MatchError => [],
    ArithmeticError => [],
    CaseClauseError => [],
    CondClauseError => [],
    FunctionClauseError => [],
    WithClauseError => [],
    BadMapError => [],
    Enum.EmptyError => [],
    Enum.OutOfBoundsError => []
  }

  # Modules with only some functions allowed.
  @closed_modules %{
    Logger => [:warn, :warning, :info, :debug, :error, :notice, :critical, :alert, :emergency, :log, :bare_log,
               :level, :enabled?, :__should_log__, :__do_log__],
    :math => :all,
    :binary => :all,
    :lists => [:reverse, :sort, :nth, :nthtail, :sublist, :seq, :sum, :max, :min, :flatten, :append, :zip,
               :keyfind, :member, :duplicate, :last, :usort, :split, :foldl, :foldr, :map, :filter],
    :maps => [:get, :put, :find, :keys, :values, :from_list, :to_list, :merge, :remove, :is_key, :size, :fold, :map],
    :unicode => [:characters_to_binary, :characters_to_list],
    :calendar => [:gregorian_seconds_to_datetime, :datetime_to_gregorian_seconds, :day_of_the_week,
                  :is_leap_year, :last_day_of_the_month, :valid_date, :date_to_gregorian_days,
                  :gregorian_days_to_date],
    :erlang => [:+, :-, :*, :/, :div, :rem, :band, :bor, :bxor, :bnot, :bsl, :bsr, :abs, :float, :trunc, :round,
                :ceil, :floor, :max, :min, :byte_size, :bit_size, :binary_part, :element, :setelement,
                :tuple_size, :size, :length, :hd, :tl, :list_to_tuple, :tuple_to_list, :list_to_binary,
                :binary_to_list, :iolist_to_binary, :iolist_size, :integer_to_binary, :integer_to_list,
                :binary_to_integer, :list_to_integer, :float_to_binary, :float_to_list, :binary_to_float,
                :list_to_float, :crc32, :adler32, :md5, :phash2, :append_element, :==, :"/=", :"=<", :<, :>=,
                :>, :"=:=", :"=/=", :is_atom, :is_binary, :is_bitstring, :is_boolean, :is_float, :is_integer,
                :is_list, :is_map, :is_number, :is_tuple, :not, :and, :or, :xor, :map_size, :map_get,
                :is_map_key, :split_binary, :atom_to_binary, :atom_to_list, :bitstring_to_list]
  }

  # Protocol implementations dispatch may reach (the build consolidates the protocols with exactly
  # these; a struct forged with any other name raises Protocol.UndefinedError, or for Inspect falls
  # back to Inspect.Any, which prints the map). No File.Stream, IO.Stream, GenEvent.Stream, URI,
  # Version, HashDict/HashSet or Macro.Env.
  @protocol_impls %{
    Enumerable => [Date.Range, Function, List, Map, MapSet, Range, Stream],
    Collectable => [BitString, List, Map, MapSet],
    Inspect => [Any, Atom, BitString, Date, Date.Range, DateTime, Float, Function, Integer, Inspect.Error, List, Map,
                MapSet, NaiveDateTime, PID, Port, Range, Reference, Regex, Stream, Time, Tuple],
    String.Chars => [Atom, BitString, Date, DateTime, Float, Integer, List, NaiveDateTime, Time],
    List.Chars => [Atom, BitString, Float, Integer, List]
  }

  # Local calls (and the special forms among them) a parser may never make.
  # Kernel's auto-imports and special forms a parser may never use (other local names can only be
  # the parser's own functions, since importing partly-allowed modules is refused).
  @forbidden_locals [:apply, :spawn, :spawn_link, :spawn_monitor, :send, :receive, :quote, :unquote,
                     :unquote_splicing, :defmacro, :defmacrop, :binding, :dbg]

  @forbidden_attributes [:on_load, :before_compile, :after_compile, :on_definition, :compile, :external_resource]

  @doc "The allowed modules, for documentation and `parser check` messages."
  def allowed_modules, do: Map.keys(@open_modules) ++ Map.keys(@closed_modules)

  @doc "Protocol => the implementations dispatch may reach (see parsers/consolidate.exs)."
  def protocol_impls, do: @protocol_impls

  @doc """
  Checks a parsed parser module. `own` is the parser's own module alias (`Parser`). Returns `:ok` or
  `{:error, [{line, message}]}` sorted by line.
  """
  def check(ast, own \\ [:Parser]) do
    {_, violations} = Macro.prewalk(ast, [], fn node, acc -> {node, visit(node, own, acc)} end)

    case Enum.uniq(violations) do
      [] -> :ok
      list -> {:error, Enum.sort_by(list, fn {line, msg} -> {line || 0, msg} end)}
    end
  end

  defp line(meta) when is_list(meta), do: Keyword.get(meta, :line)
  defp line(_), do: nil

  # Remote call with an alias target: Mod.fun(args) (also &Mod.fun/1, pipes and no-paren calls).
  defp visit({{:., meta, [{:__aliases__, _, parts}, fun]}, _, _args}, own, acc) when is_atom(fun) do
    cond do
      parts == own -> acc
      true -> check_remote(Module.concat(parts), fun, line(meta), acc)
    end
  end

  # Remote call with an atom target: :erlang.fun(args), :"Elixir.File".read(...)
  defp visit({{:., meta, [mod, fun]}, _, _args}, _own, acc) when is_atom(mod) and is_atom(fun) do
    check_remote(mod, fun, line(meta), acc)
  end

  defp visit({{:., _meta, [{:__MODULE__, _, _}, fun]}, _, _}, _own, acc) when is_atom(fun), do: acc

  # `expr.field` without parentheses is map access (made safe at compile time); with parentheses or
  # arguments on anything but an alias or atom it is a dynamic call.
  defp visit({{:., meta, [target, fun]}, call_meta, args}, _own, acc) when is_atom(fun) do
    if Keyword.get(call_meta, :no_parens, false) and args == [] do
      acc
    else
      [{line(meta), "dynamic call #{Macro.to_string(target)}.#{fun}(...) is not allowed: name the module"} | acc]
    end
  end

  # Anonymous-function calls fun.(args) are fine; calls on other expressions are dynamic.
  defp visit({{:., _meta, [_fun_expr]}, _, _}, _own, acc), do: acc

  defp visit({:__aliases__, meta, parts} = _alias, own, acc) when is_list(parts) do
    cond do
      parts == own -> acc
      Enum.all?(parts, &is_atom/1) -> check_module_reference(Module.concat(parts), line(meta), acc)
      true -> [{line(meta), "dynamic alias #{Macro.to_string({:__aliases__, meta, parts})} is not allowed"} | acc]
    end
  end

  defp visit({:@, meta, [{name, _, _}]}, _own, acc) when name in @forbidden_attributes do
    [{line(meta), "module attribute @#{name} is not allowed"} | acc]
  end

  defp visit({:defmodule, meta, _}, _own, acc) do
    if Keyword.get(meta, :fieldline_top, false),
      do: acc,
      else: [{line(meta), "nested defmodule is not allowed: keep helpers in the Parser module"} | acc]
  end

  # import of a module with forbidden functions would make them local calls (import :erlang; halt()).
  defp visit({:import, meta, [target | _]}, _own, acc) do
    mod =
      case target do
        {:__aliases__, _, parts} -> Module.concat(parts)
        atom when is_atom(atom) -> atom
        _ -> nil
      end

    if Map.get(@open_modules, mod) == [] do
      acc
    else
      [{line(meta), "import of #{Macro.to_string(target)} is not allowed: call its functions by name"} | acc]
    end
  end

  # &spawn/1 and friends: a capture of a forbidden local.
  defp visit({:&, meta, [{:/, _, [{name, _, ctx}, _arity]}]}, _own, acc)
       when is_atom(name) and is_atom(ctx) and name in @forbidden_locals do
    [{line(meta), "capture of #{name} is not allowed"} | acc]
  end

  defp visit({name, meta, args}, _own, acc) when is_atom(name) and is_list(args) and name in @forbidden_locals do
    [{line(meta), "call to #{name}/#{length(args)} is not allowed"} | acc]
  end

  defp visit({name, meta, ctx}, _own, acc) when name in [:receive, :quote] and is_atom(ctx) do
    [{line(meta), "#{name} is not allowed"} | acc]
  end

  defp visit(atom, _own, acc) when is_atom(atom) do
    # An atom naming a forbidden Elixir module (:"Elixir.File") could reach a call through Kernel
    # functions that take modules; plain data atoms (:ok, :code, :temperature) are fine.
    case Atom.to_string(atom) do
      "Elixir." <> _ -> check_module_reference(atom, nil, acc)
      _ -> acc
    end
  end

  defp visit(_, _, acc), do: acc

  defp check_module_reference(mod, line, acc) do
    if Map.has_key?(@open_modules, mod) or Map.has_key?(@closed_modules, mod) or mod in [Logger, Kernel.SpecialForms] do
      acc
    else
      [{line, "module #{inspect(mod)} is not allowed"} | acc]
    end
  end

  defp check_remote(mod, fun, line, acc) do
    cond do
      Map.has_key?(@open_modules, mod) ->
        if fun in Map.fetch!(@open_modules, mod),
          do: [{line, "call to #{inspect(mod)}.#{fun} is not allowed"} | acc],
          else: acc

      Map.has_key?(@closed_modules, mod) ->
        case Map.fetch!(@closed_modules, mod) do
          :all -> acc
          funs -> if fun in funs, do: acc, else: [{line, "call to #{inspect(mod)}.#{fun} is not allowed"} | acc]
        end

      true ->
        [{line, "call to #{inspect(mod)}.#{fun} is not allowed: module #{inspect(mod)} is not available to parsers"} | acc]
    end
  end
end
