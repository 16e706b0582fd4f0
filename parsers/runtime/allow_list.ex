defmodule Fieldline.AllowList do
  @moduledoc """
  The language layer of the sandbox: what parser code may call (parser-contract.md), checked twice.

  1. Before compiling (`check/2`, on the AST): every remote call must name an allowed module and
     function; aliases, imports, requires and `defdelegate`s must point at allowed modules; local
     calls, special forms and module attributes are checked against deny-lists. This is the only
     check that covers code running at compile time (module bodies), so it stays strict.
  2. After compiling (`beam_call/3`, used by `Fieldline.BeamCheck` on the compiled module): every
     external call, export fun and BIF at `{module, function, arity}` granularity, whatever source
     form (alias, import, capture, macro, `defdelegate`) produced it.

  Violations name the line and the call. `expr.field` is rewritten by `Fieldline.Compiler` into a
  map-only access, and calls that take a `Regex` into `Fieldline.SafeRegex`, so no variable acts as
  a module and no forged compiled pattern reaches `:re`.
  """

  # Elixir modules whose every function a parser may call, minus the listed ones.
  @open_modules %{
    Kernel => [:apply, :spawn, :spawn_link, :spawn_monitor, :send, :binding, :dbg, :macro_exported?],
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

  # :erlang functions parsers call by name, with the arities allowed in compiled code.
  @erlang %{
    +: [1, 2],
    -: [1, 2],
    *: [2],
    /: [2],
    div: [2],
    rem: [2],
    band: [2],
    bor: [2],
    bxor: [2],
    bnot: [1],
    bsl: [2],
    bsr: [2],
    abs: [1],
    float: [1],
    trunc: [1],
    round: [1],
    ceil: [1],
    floor: [1],
    max: [2],
    min: [2],
    byte_size: [1],
    bit_size: [1],
    binary_part: [2, 3],
    element: [2],
    setelement: [3],
    tuple_size: [1],
    size: [1],
    length: [1],
    hd: [1],
    tl: [1],
    list_to_tuple: [1],
    tuple_to_list: [1],
    list_to_binary: [1],
    binary_to_list: [1, 3],
    iolist_to_binary: [1],
    iolist_size: [1],
    integer_to_binary: [1, 2],
    integer_to_list: [1, 2],
    binary_to_integer: [1, 2],
    list_to_integer: [1, 2],
    float_to_binary: [1, 2],
    float_to_list: [1, 2],
    binary_to_float: [1],
    list_to_float: [1],
    crc32: [1, 2],
    adler32: [1, 2],
    md5: [1],
    phash2: [1, 2],
    append_element: [2],
    ==: [2],
    "/=": [2],
    "=<": [2],
    <: [2],
    >=: [2],
    >: [2],
    "=:=": [2],
    "=/=": [2],
    is_atom: [1],
    is_binary: [1],
    is_bitstring: [1],
    is_boolean: [1],
    is_float: [1],
    is_integer: [1],
    is_list: [1],
    is_map: [1],
    is_number: [1],
    is_tuple: [1],
    not: [1],
    and: [2],
    or: [2],
    xor: [2],
    map_size: [1],
    map_get: [2],
    is_map_key: [2],
    split_binary: [2],
    atom_to_binary: [1, 2],
    atom_to_list: [1],
    bitstring_to_list: [1]
  }

  # What allowed Elixir code compiles into besides the above (compiled code only: the Kernel, Tuple
  # and String functions the compiler inlines, raise/throw/exit, `++`). `exit/2`, `send/2`,
  # `spawn*`, `apply`, `make_fun/3` and the atom-creating conversions stay out.
  @erlang_compiled %{
    ++: [2],
    --: [2],
    self: [0],
    node: [0, 1],
    make_ref: [0],
    throw: [1],
    exit: [1],
    error: [1, 2],
    function_exported: [3],
    is_function: [1, 2],
    is_pid: [1],
    is_port: [1],
    is_reference: [1],
    binary_to_existing_atom: [2],
    list_to_existing_atom: [1],
    make_tuple: [2],
    insert_element: [3],
    delete_element: [2]
  }

  # Modules with only some functions allowed (every exported arity of a listed name).
  @closed_modules %{
    Logger => [:warn, :warning, :info, :debug, :error, :notice, :critical, :alert, :emergency, :log, :bare_log,
               :level, :enabled?, :__should_log__, :__do_log__],
    :math => :all,
    :binary => :all,
    :lists => [:reverse, :sort, :nth, :nthtail, :sublist, :seq, :sum, :max, :min, :flatten, :append, :zip,
               :keyfind, :member, :duplicate, :last, :usort, :split, :foldl, :foldr, :map, :filter],
    :maps => [:get, :put, :find, :keys, :values, :from_list, :to_list, :merge, :remove, :is_key, :size, :fold, :map,
              :update],
    :unicode => [:characters_to_binary, :characters_to_list],
    :calendar => [:gregorian_seconds_to_datetime, :datetime_to_gregorian_seconds, :day_of_the_week,
                  :is_leap_year, :last_day_of_the_month, :valid_date, :date_to_gregorian_days,
                  :gregorian_days_to_date],
    :erlang => Map.keys(@erlang),
    # The original platform's libraries (runtime modules, parsers/runtime/time_series.ex and
    # lib_wmbus.ex): only their public entry points.
    TimeSeries => [:fill_gaps],
    LibWmbus => [],
    LibWmbus.Dib => [:parse_dib]
  }

  # Calls the Elixir compiler emits for allowed constructs (compiled code only; parser source
  # cannot name these modules): interpolation, to_charlist, `raise var`, destructure, `for ... into:`,
  # the rewritten `expr.field` and the regex wrappers.
  @compiled_calls MapSet.new([
                    {String.Chars, :to_string, 1},
                    {List.Chars, :to_charlist, 1},
                    {Kernel.Utils, :raise, 1},
                    {Kernel.Utils, :destructure, 2},
                    {Collectable, :into, 1},
                    {Fieldline.Runtime, :field!, 2},
                    {Fieldline.Runtime, :returned, 1}
                  ])

  # Wrappers whose every exported function compiled code may call.
  @compiled_modules [Fieldline.SafeRegex, Fieldline.SafeString]

  # Functions of open modules that compiled code may not call directly. A `%Regex{}` is a map a
  # parser can forge, and `:re` runs its compiled pattern unchecked (a forged one crashes the VM):
  # `Fieldline.Compiler` rewrites calls written by name into `Fieldline.SafeRegex`, so these only
  # remain when a call was hidden (import, alias, capture of `=~`).
  @regex_taking [
    {Regex, :match?, 2},
    {Regex, :named_captures, 2},
    {Regex, :named_captures, 3},
    {Regex, :names, 1},
    {Regex, :replace, 3},
    {Regex, :replace, 4},
    {Regex, :run, 2},
    {Regex, :run, 3},
    {Regex, :scan, 2},
    {Regex, :scan, 3},
    {Regex, :split, 2},
    {Regex, :split, 3},
    {Regex, :recompile, 1},
    {Regex, :recompile!, 1},
    {String, :split, 2},
    {String, :split, 3},
    {String, :replace, 3},
    {String, :replace, 4},
    {String, :match?, 2},
    {Kernel, :=~, 2}
  ]

  # Atom creation from data (worker atom tables are finite and never collected).
  @atom_creating [
    {:erlang, :binary_to_atom, 1},
    {:erlang, :binary_to_atom, 2},
    {:erlang, :list_to_atom, 1},
    {String, :to_atom, 1},
    {List, :to_atom, 1},
    {Module, :concat, 1},
    {Module, :concat, 2},
    {Module, :safe_concat, 1},
    {Module, :safe_concat, 2}
  ]

  # Protocol implementations dispatch may reach (the build consolidates the protocols with exactly
  # these; a struct forged with any other name raises Protocol.UndefinedError, or for Inspect falls
  # back to Inspect.Any, which prints the map). No File.Stream, IO.Stream, GenEvent.Stream, URI,
  # Version, HashDict/HashSet or Macro.Env.
  @protocol_impls %{
    Enumerable => [Date.Range, Function, List, Map, MapSet, Range, Stream, Timex.Interval],
    Collectable => [BitString, List, Map, MapSet],
    Inspect => [Any, Atom, BitString, Date, Date.Range, DateTime, Float, Function, Integer, Inspect.Error, List, Map,
                MapSet, NaiveDateTime, PID, Port, Range, Reference, Regex, Stream, Time, Tuple],
    String.Chars => [Atom, BitString, Date, DateTime, Float, Integer, List, NaiveDateTime, Time],
    List.Chars => [Atom, BitString, Float, Integer, List]
  }

  # Kernel's auto-imports and special forms a parser may never use (other local names can only be
  # the parser's own functions, since importing partly-allowed modules is refused).
  @forbidden_locals [:apply, :spawn, :spawn_link, :spawn_monitor, :send, :receive, :quote, :unquote,
                     :unquote_splicing, :defmacro, :defmacrop, :binding, :dbg, :macro_exported?]

  @forbidden_attributes [:on_load, :before_compile, :after_compile, :after_verify, :on_definition, :compile,
                         :external_resource]

  # Modules `use` may name: their __using__ runs at compile time.
  @usable [Platform.Parsing.Behaviour, Bitwise]

  @doc "The allowed modules, for documentation and `parser check` messages."
  def allowed_modules, do: Map.keys(@open_modules) ++ Map.keys(@closed_modules)

  @doc """
  What parser source may name, for the generated list in docs/PARSERS.md (parsers/allowed_doc.exs):
  `open` (module => functions it may not call), `closed` (module => the functions it may call, or
  `:all`), `erlang` (the `:erlang` functions), `usable` (what `use` may name).
  """
  def reference do
    %{open: @open_modules, closed: Map.delete(@closed_modules, :erlang), erlang: Map.keys(@erlang), usable: @usable}
  end

  @doc "Protocol => the implementations dispatch may reach (see parsers/consolidate.exs)."
  def protocol_impls, do: @protocol_impls

  ## The compiled code (Fieldline.BeamCheck)

  @doc """
  Whether compiled parser code may call `mod.fun/arity` directly or hold it as `&mod.fun/arity`:
  `:ok`, `{:error, why}` (a sentence after "call to M.f/a is not allowed") or `{:error, :undefined}`
  (an allowed module without that function). The contextual calls
  (`:erlang.error/3`, `:erlang.raise/3`, `Exception.normalize/3`, `:erlang.get_module_info/1,2`) are
  not decided here: `Fieldline.BeamCheck` allows them only in the shape the compiler emits.
  """
  def beam_call(mod, fun, arity) when is_atom(mod) and is_atom(fun) and is_integer(arity) do
    mfa = {mod, fun, arity}

    cond do
      mfa in @atom_creating ->
        {:error, "it creates atoms from data"}

      mfa in @regex_taking ->
        {:error, "call it by its name (#{short(mod)}.#{fun}(...)) so the sandbox can rebuild the regex"}

      MapSet.member?(@compiled_calls, mfa) ->
        :ok

      mod in @compiled_modules ->
        exported(mod, fun, arity)

      match?("MACRO-" <> _, Atom.to_string(fun)) ->
        {:error, "macros are expanded at compile time"}

      mod == :erlang ->
        cond do
          arity in Map.get(@erlang, fun, []) or arity in Map.get(@erlang_compiled, fun, []) -> :ok
          fun in [:apply, :make_fun] -> {:error, "dynamic call (module or function in a variable): name the module"}
          fun in [:send, :send_after, :send_nosuspend] -> {:error, "message passing is not available to parsers"}
          fun in [:spawn, :spawn_link, :spawn_monitor, :spawn_opt] -> {:error, "processes are not available to parsers"}
          true -> {:error, "not on the list of :erlang functions parsers may use"}
        end

      Map.has_key?(@open_modules, mod) ->
        if fun in Map.fetch!(@open_modules, mod),
          do: {:error, "#{short(mod)}.#{fun} is not available to parsers"},
          else: exported(mod, fun, arity)

      Map.has_key?(@closed_modules, mod) ->
        case Map.fetch!(@closed_modules, mod) do
          :all -> exported(mod, fun, arity)
          funs -> if fun in funs, do: exported(mod, fun, arity), else: {:error, "#{short(mod)}.#{fun} is not available to parsers"}
        end

      true ->
        {:error, "module #{short(mod)} is not available to parsers"}
    end
  end

  # `{:error, :undefined}`: the module is allowed but has no such function (Fieldline.BeamCheck
  # words it "undefined function M.f/a").
  defp exported(mod, fun, arity) do
    if Code.ensure_loaded?(mod) and function_exported?(mod, fun, arity),
      do: :ok,
      else: {:error, :undefined}
  end

  @doc """
  The module and function a parser author wrote for `mod.fun`: the compiler's rewrites (regex
  calls into `Fieldline.SafeRegex`/`SafeString`) undone, so messages name what the source says.
  """
  def as_written(Fieldline.SafeRegex, :match_op), do: {Kernel, :=~}
  def as_written(Fieldline.SafeRegex, fun), do: {Regex, fun}
  def as_written(Fieldline.SafeString, fun), do: {String, fun}
  def as_written(mod, fun), do: {mod, fun}

  defp short(mod), do: inspect(mod)

  ## The source (before compiling)

  @doc """
  Checks a parsed parser module. `own` is the parser's own module alias (`Parser`). Returns `:ok` or
  `{:error, [{line, message}]}` sorted by line.
  """
  def check(ast, own \\ [:Parser]) do
    aliases = collect_aliases(ast, own)

    {_, violations} =
      Macro.prewalk(ast, [], fn node, acc ->
        acc = visit(node, {own, aliases}, acc)

        # alias/require/import name modules their own way (checked above): not walked further.
        case node do
          {directive, meta, [_ | _]} when directive in [:alias, :require, :import] -> {{directive, meta, []}, acc}
          _ -> {node, acc}
        end
      end)

    case violations |> Enum.uniq() |> present() do
      [] -> :ok
      list -> {:error, Enum.sort_by(list, fn {line, msg} -> {line || 0, msg} end)}
    end
  end

  # What the walk found, worded for the parser author: each problem once (a reference to a module
  # on a line where a call, directive or `use` already names that module is the same problem), a
  # module that does not exist at all is "unknown" rather than "not allowed", a function an allowed
  # module does not have is "undefined". The verdict does not change: an entry is dropped only when
  # another one on the same line remains.
  defp present(violations) do
    named = for {line, finding} <- violations, mod = names_module(finding), into: MapSet.new(), do: {line, mod}

    violations
    |> Enum.reject(fn
      {line, {:module_ref, mod}} -> MapSet.member?(named, {line, mod})
      _ -> false
    end)
    |> Enum.map_reduce(%{}, fn {line, finding}, known ->
      {message, known} = word(finding, known)
      {{line, message}, known}
    end)
    |> elem(0)
    |> Enum.uniq()
  end

  defp names_module({:remote, mod, _fun}), do: mod
  defp names_module({:text, _msg, mod}), do: mod
  defp names_module(_), do: nil

  defp word(msg, known) when is_binary(msg), do: {msg, known}
  defp word({:text, msg, _mod}, known), do: {msg, known}

  defp word({:module_ref, mod}, known) do
    case exists(mod, known) do
      {false, known} -> {"unknown module #{inspect(mod)}#{suggest_module(mod)}", known}
      {true, known} -> {"module #{inspect(mod)} is not allowed", known}
    end
  end

  defp word({:remote, mod, fun}, known) do
    cond do
      Map.has_key?(@open_modules, mod) or Map.has_key?(@closed_modules, mod) ->
        if defines?(mod, fun),
          do: {"call to #{inspect(mod)}.#{fun} is not allowed", known},
          else: {"undefined function #{inspect(mod)}.#{fun}#{suggest_function(mod, fun, nil)}", known}

      true ->
        case exists(mod, known) do
          {false, known} -> {"unknown module #{inspect(mod)} (in #{inspect(mod)}.#{fun})#{suggest_module(mod)}", known}
          {true, known} -> {"call to #{inspect(mod)}.#{fun} is not allowed: module #{inspect(mod)} is not available to parsers", known}
        end
    end
  end

  # Whether a module exists in this VM (loaded or on the code path), asked of the code server for at
  # most @max_lookups distinct modules per check (each may search the code path); past that, and for
  # every parser module of this VM, the answer is "exists" (the wording the check always had).
  @max_lookups 20
  defp exists(mod, known) do
    case Map.fetch(known, mod) do
      {:ok, answer} ->
        {answer, known}

      :error ->
        answer =
          cond do
            String.starts_with?(Atom.to_string(mod), "Elixir.FieldlineParsers") -> true
            map_size(known) >= @max_lookups -> true
            :erlang.module_loaded(mod) -> true
            true -> :code.which(mod) != :non_existing
          end

        {answer, Map.put(known, mod, answer)}
    end
  end

  @doc "Whether an allowed module has a function or macro named `fun` (any arity)."
  def defines?(mod, fun) do
    Code.ensure_loaded?(mod) and Enum.any?(all_names(mod), fn {name, _} -> name == fun end)
  end

  defp all_names(mod) do
    macros = if function_exported?(mod, :__info__, 1), do: mod.__info__(:macros), else: []
    mod.module_info(:exports) ++ macros
  end

  # What a suggestion may name: not the generated or internal functions.
  defp names_of(mod) do
    Enum.reject(all_names(mod), fn {name, _} ->
      String.starts_with?(Atom.to_string(name), ["__", "MACRO-"]) or name == :module_info
    end)
  end

  defp suggest_module(mod) do
    shown = inspect(mod)

    case Enum.max_by(allowed_modules(), &String.jaro_distance(inspect(&1), shown), fn -> nil end) do
      nil -> ""
      best -> if String.jaro_distance(inspect(best), shown) >= 0.8, do: " (did you mean #{inspect(best)}?)", else: ""
    end
  end

  @doc "` (did you mean Mod.fun/arity?)` for the closest function an allowed module has, or `\"\"`."
  def suggest_function(mod, fun, arity) do
    candidates = if Code.ensure_loaded?(mod), do: names_of(mod), else: []
    wanted = Atom.to_string(fun)

    closest = fn {name, a} -> {String.jaro_distance(Atom.to_string(name), wanted), a == arity} end

    case Enum.max_by(candidates, closest, fn -> nil end) do
      {name, a} ->
        if String.jaro_distance(Atom.to_string(name), wanted) >= 0.8,
          do: " (did you mean #{inspect(mod)}.#{name}/#{a}?)",
          else: ""

      nil ->
        ""
    end
  end

  defp line(meta) when is_list(meta), do: Keyword.get(meta, :line)
  defp line(_), do: nil

  # `alias X` / `alias X, as: Y` / `alias X.{A, B}` anywhere in the module: the name each alias
  # introduces => the module it stands for (`:own` for the parser itself). Resolved before any
  # module reference is checked, so `alias :file, as: Map` makes `Map.read_file` a call to :file.
  defp collect_aliases(ast, own) do
    {_, acc} =
      Macro.prewalk(ast, %{}, fn
        {:alias, _meta, [target | rest]} = node, acc ->
          opts = List.first(rest) || []
          {node, Enum.reduce(alias_targets(target, own), acc, &add_alias(&1, opts, &2))}

        {:require, _meta, [target, opts]} = node, acc when is_list(opts) ->
          if Keyword.keyword?(opts) and Keyword.has_key?(opts, :as),
            do: {node, Enum.reduce(alias_targets(target, own), acc, &add_alias(&1, opts, &2))},
            else: {node, acc}

        node, acc ->
          {node, acc}
      end)

    acc
  end

  defp alias_targets({{:., _, [{:__aliases__, _, base}, :{}]}, _, children}, own) do
    for {:__aliases__, _, parts} <- children, do: alias_target(base ++ parts, own)
  end

  defp alias_targets(target, own), do: [alias_target(target, own)]

  defp alias_target({:__aliases__, _, parts}, own), do: alias_target(parts, own)
  defp alias_target({:__MODULE__, _, ctx}, _own) when is_atom(ctx), do: {:own, :Parser}
  defp alias_target(parts, own) when is_list(parts) and parts == own, do: {:own, List.last(parts)}

  defp alias_target(parts, _own) when is_list(parts) do
    if Enum.all?(parts, &is_atom/1), do: {Module.concat(parts), List.last(parts)}, else: {:dynamic, nil}
  end

  defp alias_target(atom, _own) when is_atom(atom), do: {atom, atom_alias_name(atom)}
  defp alias_target(_other, _own), do: {:dynamic, nil}

  defp atom_alias_name(atom) do
    case Atom.to_string(atom) do
      "Elixir." <> name -> name |> String.split(".") |> List.last() |> String.to_atom()
      _ -> nil
    end
  end

  defp add_alias({target, default_name}, opts, acc) do
    name =
      case Keyword.get(opts, :as) do
        {:__aliases__, _, [single]} -> single
        nil -> default_name
        _ -> nil
      end

    if name, do: Map.put(acc, name, target), else: acc
  end

  # The module an alias node stands for: `:own`, a module atom, or `{:dynamic, ast}`.
  defp resolve({:__aliases__, _, parts} = node, {own, aliases}) do
    cond do
      parts == own ->
        :own

      not Enum.all?(parts, &is_atom/1) ->
        {:dynamic, node}

      true ->
        [head | rest] = parts

        case Map.get(aliases, head) do
          nil -> Module.concat(parts)
          :own -> if rest == [], do: :own, else: {:dynamic, node}
          {:dynamic, _} = d -> d
          target -> if rest == [], do: target, else: Module.concat([target | rest])
        end
    end
  end

  defp resolve({:__MODULE__, _, ctx}, _ctx) when is_atom(ctx), do: :own
  defp resolve(atom, _ctx) when is_atom(atom), do: atom
  defp resolve(other, _ctx), do: {:dynamic, other}

  # `alias A.{B, C}` names A.B and A.C; anything else names itself.
  defp directive_targets({{:., _, [{:__aliases__, _, base}, :{}]}, _, children}),
    do: for({:__aliases__, m, parts} <- children, do: {:__aliases__, m, base ++ parts})

  defp directive_targets(target), do: [target]

  # alias / import / require / use: the named module must be allowed (or the parser itself).
  defp visit({:alias, meta, [target | _]}, ctx, acc) do
    Enum.reduce(directive_targets(target), acc, fn t, acc -> directive_target("alias", t, meta, ctx, acc) end)
  end

  defp visit({:require, meta, [target | _]}, ctx, acc) do
    Enum.reduce(directive_targets(target), acc, fn t, acc -> directive_target("require", t, meta, ctx, acc) end)
  end

  defp visit({:use, meta, [target | _]}, ctx, acc) do
    case resolve(target, ctx) do
      mod when mod in @usable -> acc
      mod when is_atom(mod) -> [{line(meta), {:text, "use of #{Macro.to_string(target)} is not allowed", mod}} | acc]
      _ -> [{line(meta), "use of #{Macro.to_string(target)} is not allowed"} | acc]
    end
  end

  # import of a module with forbidden functions would make them local calls (import :erlang; halt()).
  # `only:` may narrow a partly-allowed module down to allowed functions.
  defp visit({:import, meta, [target | rest]}, ctx, acc) do
    mod = resolve(target, ctx)
    only = rest |> List.first() |> keyword_get(:only)

    allowed =
      cond do
        not is_atom(mod) or mod == :own -> false
        Map.get(@open_modules, mod) == [] -> true
        Map.get(@closed_modules, mod) == :all -> true
        is_list(only) and only != [] -> Enum.all?(only, &imported_fun_allowed?(mod, &1))
        true -> false
      end

    if allowed,
      do: acc,
      else: [{line(meta), "import of #{Macro.to_string(target)} is not allowed: call its functions by name"} | acc]
  end

  # defdelegate f(args), to: Mod, as: g — a call to Mod.g.
  defp visit({:defdelegate, meta, [head, opts]}, ctx, acc) when is_list(opts) do
    fun =
      case Keyword.get(opts, :as) || head do
        name when is_atom(name) -> name
        {:when, _, [{name, _, _} | _]} when is_atom(name) -> name
        {name, _, _} when is_atom(name) -> name
        _ -> nil
      end

    case {resolve(Keyword.get(opts, :to), ctx), fun} do
      {:own, _} -> acc
      {mod, fun} when is_atom(mod) and is_atom(fun) and not is_nil(fun) -> check_remote(mod, fun, line(meta), acc)
      _ -> [{line(meta), "defdelegate must name an allowed module and function"} | acc]
    end
  end

  # Kernel.name(...) / Kernel.SpecialForms.name(...): the same rules as the local `name(...)`.
  defp visit({{:., meta, [{:__aliases__, _, [:Kernel]} = mod, name]}, call_meta, args} = node, ctx, acc)
       when is_atom(name) and is_list(args) do
    if resolve(mod, ctx) == Kernel do
      # Kernel.send(...) is one problem: named as the remote call when that is refused, else as the
      # local form (Kernel.@(on_load(...))).
      case remote_call(node, ctx, acc) do
        ^acc -> visit({name, Keyword.merge(call_meta, line: line(meta)), args}, ctx, acc)
        remote -> remote
      end
    else
      remote_call(node, ctx, acc)
    end
  end

  defp visit({{:., meta, [{:__aliases__, _, [:Kernel, :SpecialForms]}, name]}, _, _}, _ctx, acc) when is_atom(name) do
    [{line(meta), "call to Kernel.SpecialForms.#{name} is not allowed"} | acc]
  end

  defp visit({{:., _, [_target, fun]}, _, _args} = node, ctx, acc) when is_atom(fun), do: remote_call(node, ctx, acc)

  # Anonymous-function calls fun.(args) are fine; calls on other expressions are dynamic.
  defp visit({{:., _meta, [_fun_expr]}, _, _}, _ctx, acc), do: acc

  defp visit({:__aliases__, meta, _parts} = node, ctx, acc) do
    case resolve(node, ctx) do
      :own -> acc
      {:dynamic, _} -> [{line(meta), "dynamic alias #{Macro.to_string(node)} is not allowed"} | acc]
      mod -> check_module_reference(mod, line(meta), acc)
    end
  end

  defp visit({:@, meta, [{name, _, _}]}, _ctx, acc) when name in @forbidden_attributes do
    [{line(meta), "module attribute @#{name} is not allowed"} | acc]
  end

  defp visit({:defmodule, meta, _}, _ctx, acc) do
    if Keyword.get(meta, :fieldline_top, false),
      do: acc,
      else: [{line(meta), "nested defmodule is not allowed: keep helpers in the Parser module"} | acc]
  end

  # ~w(...)a / ~W(...)a with interpolation: String.to_atom on data.
  defp visit({sigil, meta, [{:<<>>, _, parts}, mods]}, _ctx, acc)
       when sigil in [:sigil_w, :sigil_W] and is_list(mods) and is_list(parts) do
    if ?a in mods and not Enum.all?(parts, &is_binary/1),
      do: [{line(meta), "~w(...)a with interpolation is not allowed: it creates atoms from data"} | acc],
      else: acc
  end

  # ~D[2020-01-01 Mod] (and ~T, ~N, ~U): a calendar suffix makes the sigil call Mod.parse_date/1 (and
  # friends) with the text while the parser compiles, before any BEAM exists to check.
  defp visit({sigil, meta, [{:<<>>, _, parts}, _mods]}, _ctx, acc)
       when sigil in [:sigil_D, :sigil_T, :sigil_N, :sigil_U] and is_list(parts) do
    calendar = if Enum.all?(parts, &is_binary/1), do: parts |> Enum.join() |> String.split() |> List.last(), else: "?"

    if calendar in [nil, "Calendar.ISO"] or not String.match?(calendar, ~r/^[A-Z?]/),
      do: acc,
      else: [{line(meta), "a calendar in ~#{sigil |> Atom.to_string() |> String.last()} is not allowed"} | acc]
  end

  # &spawn/1 and friends: a capture of a forbidden local.
  defp visit({:&, meta, [{:/, _, [{name, _, ctx}, _arity]}]}, _ctx, acc)
       when is_atom(name) and is_atom(ctx) and name in @forbidden_locals do
    [{line(meta), "capture of #{name} is not allowed"} | acc]
  end

  defp visit({name, meta, args}, _ctx, acc) when is_atom(name) and is_list(args) and name in @forbidden_locals do
    [{line(meta), "call to #{name}/#{length(args)} is not allowed"} | acc]
  end

  defp visit({name, meta, ctx}, _ctx, acc) when name in [:receive, :quote] and is_atom(ctx) do
    [{line(meta), "#{name} is not allowed"} | acc]
  end

  defp visit(atom, _ctx, acc) when is_atom(atom) do
    # An atom naming a forbidden Elixir module (:"Elixir.File") could reach a call through Kernel
    # functions that take modules; plain data atoms (:ok, :code, :temperature) are fine.
    case Atom.to_string(atom) do
      "Elixir." <> _ -> check_module_reference(atom, nil, acc)
      _ -> acc
    end
  end

  defp visit(_, _, acc), do: acc

  # Remote call Mod.fun(args) (also &Mod.fun/1, pipes and no-paren calls), after resolving aliases.
  # `expr.field` without parentheses is map access (made safe at compile time); with parentheses or
  # arguments on anything but a module it is a dynamic call.
  defp remote_call({{:., meta, [target, fun]}, call_meta, args}, ctx, acc) do
    case resolve(target, ctx) do
      :own ->
        acc

      mod when is_atom(mod) ->
        check_remote(mod, fun, line(meta), acc)

      {:dynamic, _} ->
        if Keyword.get(call_meta, :no_parens, false) and args == [],
          do: acc,
          else: [{line(meta), "dynamic call #{Macro.to_string(target)}.#{fun}(...) is not allowed: name the module"} | acc]
    end
  end

  defp directive_target(what, target, meta, ctx, acc) do
    case resolve(target, ctx) do
      :own ->
        acc

      mod when is_atom(mod) ->
        if allowed_module?(mod),
          do: acc,
          else: [{line(meta), {:text, "#{what} of #{inspect(mod)} is not allowed: module #{inspect(mod)} is not available to parsers", mod}} | acc]

      {:dynamic, _} ->
        [{line(meta), "#{what} of #{Macro.to_string(target)} is not allowed"} | acc]
    end
  end

  defp keyword_get(list, key) when is_list(list), do: if(Keyword.keyword?(list), do: Keyword.get(list, key))
  defp keyword_get(_, _), do: nil

  defp imported_fun_allowed?(mod, {fun, arity}) when is_atom(fun) and is_integer(arity) do
    case {Map.get(@open_modules, mod), Map.get(@closed_modules, mod)} do
      {forbidden, _} when is_list(forbidden) -> fun not in forbidden
      {nil, :all} -> true
      {nil, funs} when is_list(funs) -> fun in funs
      _ -> false
    end
  end

  defp imported_fun_allowed?(_mod, _), do: false

  defp allowed_module?(mod),
    do: Map.has_key?(@open_modules, mod) or Map.has_key?(@closed_modules, mod) or mod == Kernel.SpecialForms

  defp check_module_reference(mod, line, acc) do
    if allowed_module?(mod), do: acc, else: [{line, {:module_ref, mod}} | acc]
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
          funs -> if fun in funs, do: acc, else: [{line, {:remote, mod, fun}} | acc]
        end

      true ->
        [{line, {:remote, mod, fun}} | acc]
    end
  end
end
