defmodule Fieldline.BeamCheck do
  @moduledoc """
  Verifies a compiled parser module before it is ever loaded: the check runs on the code the VM
  would run, not on the source, so aliases, imports, `defdelegate`, captures, macros and `unquote`
  cannot hide a call.

  From the disassembled BEAM (`:beam_disasm`), every function is walked instruction by instruction:
  - external calls (`call_ext*`), BIFs (`bif`, `gc_bif`) and export funs (`fun M:F/A` anywhere in a
    literal) must be allowed by `Fieldline.AllowList.beam_call/3` at `{module, function, arity}`;
  - local funs and local calls must belong to the module itself (calls to its own exported
    functions, `__MODULE__.f()`, are fine: they are this code);
  - dynamic calls (`apply`: module or function in a variable), `send`, every `receive` instruction,
    `on_load` and NIF stubs are refused; so is any instruction this check does not know;
  - four calls are allowed only in the shape the Elixir compiler emits them, proven by a small
    data-flow analysis of the registers: `:erlang.error/3` only with `error_info: %{module:
    Exception}` (raise), `:erlang.raise/3` and `Exception.normalize/3` only with a stacktrace the VM
    built (`reraise e, __STACKTRACE__`, `rescue e ->`), `:erlang.get_module_info/1,2` only in the
    generated `module_info`/`__info__` for the module itself. Otherwise a parser could plant an
    `error_info` whose module and function `ErlangError` calls when the error is normalized.
  Every entry of the import table must have been seen (and allowed) in the code.

  Problems are `{line, message}` with the line of the parser source (from the BEAM's line table).
  """

  alias Fieldline.AllowList

  @error_info [error_info: %{module: Exception}]
  @info_functions [{:module_info, 0}, {:module_info, 1}, {:__info__, 1}]

  # Instructions (as :beam_disasm names them) that neither call out nor receive.
  @plain ~w(label line func_info int_code_end call call_last call_only call_ext call_ext_last call_ext_only
            bif gc_bif allocate allocate_heap allocate_zero allocate_heap_zero test_heap init init_yregs
            deallocate return test select_val select_tuple_arity jump catch catch_end move get_list
            get_tuple_element set_tuple_element put_list put_tuple put put_tuple2 put_string put_literal
            badmatch if_end case_end badrecord call_fun call_fun2 make_fun2 make_fun3 try try_end try_case
            try_case_end raise raw_raise build_stacktrace trim put_map_assoc put_map_exact get_map_elements
            get_hd get_tl swap arithfbif fclearerror fcheckerror fmove fconv fadd fsub fmul fdiv fnegate)a

  @receive ~w(remove_message timeout loop_rec loop_rec_end wait wait_timeout recv_mark recv_set recv_marker_bind
              recv_marker_clear recv_marker_reserve recv_marker_use)a

  @doc "`:ok` or `{:error, [{line, message}]}` for the compiled `binary` of `module`."
  def verify(module, binary) when is_atom(module) and is_binary(binary) do
    case disassemble(binary) do
      {:ok, ^module, code, imports} ->
        lines = line_table(binary)
        {problems, seen} = Enum.reduce(code, {[], MapSet.new()}, &check_function(&1, module, lines, &2))
        problems = problems ++ unseen_imports(imports, seen)

        case Enum.uniq(problems) do
          [] -> :ok
          list -> {:error, Enum.sort_by(list, fn {line, msg} -> {line || 0, msg} end)}
        end

      {:ok, other, _, _} ->
        {:error, [{nil, "compiled module is #{inspect(other)}, expected #{inspect(module)}"}]}

      :error ->
        {:error, [{nil, "the compiled parser could not be verified"}]}
    end
  end

  defp disassemble(binary) do
    with {:beam_file, module, _exports, _attributes, _compile_info, code} <- :beam_disasm.file(binary),
         {:ok, {^module, [imports: imports]}} <- :beam_lib.chunks(binary, [:imports]) do
      {:ok, module, code, imports}
    else
      _ -> :error
    end
  rescue
    _ -> :error
  end

  # An import never seen in the code would be a call this walk missed: refuse rather than guess.
  defp unseen_imports(imports, seen) do
    for {m, f, a} <- imports, not MapSet.member?(seen, {m, f, a}),
        do: {nil, "the compiled parser imports #{Exception.format_mfa(m, f, a)} where this check cannot see it"}
  end

  ## One function

  defp check_function({:function, name, arity, entry, instrs}, module, lines, {problems, seen}) do
    labels = label_states(instrs, %{entry => entry_state()})
    ctx = %{module: module, fun: {name, arity}, lines: lines}

    {_state, _line, problems, seen} =
      Enum.reduce(instrs, {entry_state(), nil, problems, seen}, fn instr, {state, line, problems, seen} ->
        state = if match?({:label, _}, instr), do: join(state, Map.get(labels, elem(instr, 1), :none)), else: state
        line = line_of(instr, lines, line)
        {problems, seen} = check_instr(instr, state, line, ctx, {problems, seen})
        {next, _edges} = step(instr, state)
        {next, line, problems, seen}
      end)

    {problems, seen}
  end

  defp line_of({:line, index}, lines, current), do: Map.get(lines, index, current)
  defp line_of(_instr, _lines, current), do: current

  defp check_instr(instr, state, line, ctx, acc) do
    acc = check_literals(instr, line, ctx, acc)

    case instr do
      {op, _arity, {:extfunc, m, f, a}} when op in [:call_ext, :call_ext_only] ->
        call(m, f, a, state, line, ctx, acc)

      {:call_ext_last, _arity, {:extfunc, m, f, a}, _dealloc} ->
        call(m, f, a, state, line, ctx, acc)

      {:bif, name, _fail, args, _dst} ->
        call(:erlang, name, length(args), state, line, ctx, acc)

      {:gc_bif, name, _fail, _live, args, _dst} ->
        call(:erlang, name, length(args), state, line, ctx, acc)

      {op, _arity, {m, _f, _a}} when op in [:call, :call_only] ->
        own(m, line, ctx, acc)

      {:call_last, _arity, {m, _f, _a}, _dealloc} ->
        own(m, line, ctx, acc)

      {:make_fun2, {m, _f, _a}, _index, _uniq, _free} ->
        own(m, line, ctx, acc)

      {:make_fun3, {m, _f, _a}, _index, _uniq, _dst, _env} ->
        own(m, line, ctx, acc)

      {op, _} when op in [:apply] ->
        problem(acc, line, "dynamic call (module or function in a variable) is not allowed: name the module")

      {:apply_last, _, _} ->
        problem(acc, line, "dynamic call (module or function in a variable) is not allowed: name the module")

      :send ->
        problem(acc, line, "send is not allowed")

      :on_load ->
        problem(acc, line, "@on_load is not allowed")

      :nif_start ->
        problem(acc, line, "native functions are not allowed")

      _ ->
        op = if is_tuple(instr), do: elem(instr, 0), else: instr

        cond do
          op in @receive -> problem(acc, line, "receive is not allowed")
          op in @plain -> acc
          is_atom(op) and String.starts_with?(Atom.to_string(op), "bs_") -> acc
          true -> problem(acc, line, "unsupported instruction #{inspect(op)}: the sandbox cannot verify it")
        end
    end
  end

  defp problem({problems, seen}, line, message), do: {[{line, message} | problems], seen}

  defp own(m, line, %{module: module}, acc) do
    if m == module, do: acc, else: problem(acc, line, "local call into #{inspect(m)} is not allowed")
  end

  # A direct call (or BIF) to m:f/a in the given register state.
  defp call(m, f, a, state, line, ctx, {problems, seen}) do
    seen = MapSet.put(seen, {m, f, a})
    acc = {problems, seen}
    shown = Exception.format_mfa(m, f, a)

    case contextual(m, f, a, state, ctx) do
      _ when m == ctx.module ->
        acc

      :ok ->
        acc

      {:error, why} ->
        problem(acc, line, "call to #{shown} is not allowed: #{why}")

      :not_contextual ->
        case AllowList.beam_call(m, f, a) do
          :ok -> acc
          {:error, :undefined} -> problem(acc, line, undefined(m, f, a))
          {:error, why} -> problem(acc, line, "call to #{shown} is not allowed: #{why}")
        end
    end
  end

  # "undefined function String.upcas/1 (did you mean String.upcase/1?)", named as the source wrote
  # it (not as the compiler rewrote it).
  defp undefined(m, f, a) do
    {mod, fun} = AllowList.as_written(m, f)
    "undefined function #{Exception.format_mfa(mod, fun, a)}#{AllowList.suggest_function(mod, fun, a)}"
  end

  defp contextual(:erlang, :error, 3, state, _ctx) do
    if reg(state, 2) == MapSet.new([{:lit, @error_info}]),
      do: :ok,
      else: {:error, "only `raise` may pass error_info"}
  end

  defp contextual(:erlang, :raise, 3, state, _ctx) do
    if reg(state, 2) == MapSet.new([:stacktrace]),
      do: :ok,
      else: {:error, "only `reraise e, __STACKTRACE__` may re-raise"}
  end

  defp contextual(Exception, :normalize, 3, state, _ctx) do
    if subset?(reg(state, 2), [:stacktrace, {:lit, []}]),
      do: :ok,
      else: {:error, "only `rescue` may normalize an error"}
  end

  defp contextual(:erlang, :get_module_info, a, state, %{module: module, fun: fun}) when a in [1, 2] do
    if fun in @info_functions and reg(state, 0) == MapSet.new([{:lit, module}]),
      do: :ok,
      else: {:error, "only the generated module_info/__info__ may call it"}
  end

  defp contextual(_m, _f, _a, _state, _ctx), do: :not_contextual

  # Funs held as data: `fun M:F/A` (an export) must be an allowed call, contextual ones never;
  # a local fun must belong to the module itself.
  defp check_literals(instr, line, ctx, acc) do
    instr
    |> funs_in([])
    |> Enum.reduce(acc, fn fun, {problems, seen} ->
      {:module, m} = :erlang.fun_info(fun, :module)
      {:name, f} = :erlang.fun_info(fun, :name)
      {:arity, a} = :erlang.fun_info(fun, :arity)

      case :erlang.fun_info(fun, :type) do
        {:type, :external} when m == ctx.module ->
          {problems, MapSet.put(seen, {m, f, a})}

        {:type, :external} ->
          seen = MapSet.put(seen, {m, f, a})

          verdict =
            case contextual(m, f, a, entry_state(), ctx) do
              :not_contextual -> AllowList.beam_call(m, f, a)
              _ -> {:error, "it can only be called directly"}
            end

          case verdict do
            :ok -> {problems, seen}
            {:error, :undefined} -> {[{line, "capture of " <> undefined(m, f, a)} | problems], seen}
            {:error, why} -> {[{line, "capture of #{Exception.format_mfa(m, f, a)} is not allowed: #{why}"} | problems], seen}
          end

        {:type, :local} ->
          own(m, line, ctx, {problems, seen})
      end
    end)
  end

  defp funs_in(term, acc) when is_function(term), do: [term | acc]
  defp funs_in(term, acc) when is_list(term), do: list_funs(term, acc)
  defp funs_in(term, acc) when is_tuple(term), do: term |> Tuple.to_list() |> list_funs(acc)
  defp funs_in(term, acc) when is_map(term), do: term |> Map.to_list() |> list_funs(acc)
  defp funs_in(_term, acc), do: acc

  # Improper lists are allowed in literals.
  defp list_funs([h | t], acc), do: list_funs(t, funs_in(h, acc))
  defp list_funs([], acc), do: acc
  defp list_funs(tail, acc), do: funs_in(tail, acc)

  ## Register data flow

  # What is known about a register: the set of things it may hold, each {:lit, term} (a literal put
  # there) or :stacktrace (built by the VM: build_stacktrace, or the raw one try_case hands over).
  # Registers that may hold anything else are absent. A state is {x_registers, y_registers}, or
  # :none where no path leads. Joins take the union (up to @max_facts, then anything).
  @max_facts 8

  defp entry_state, do: {%{}, %{}}

  defp reg(:none, _n), do: nil
  defp reg({xs, _ys}, n), do: Map.get(xs, n)

  defp subset?(nil, _allowed), do: false
  defp subset?(facts, allowed), do: MapSet.subset?(facts, MapSet.new(allowed))

  defp join(:none, s), do: s
  defp join(s, :none), do: s
  defp join({x1, y1}, {x2, y2}), do: {common(x1, x2), common(y1, y2)}

  defp common(a, b) do
    for {k, v} <- a, w = Map.get(b, k), u = MapSet.union(v, w), MapSet.size(u) <= @max_facts, into: %{}, do: {k, u}
  end

  # The state at each label: the join over every edge into it (the entry label is where callers
  # come in), iterated to a fixed point.
  defp label_states(instrs, labels) do
    {_state, next} =
      Enum.reduce(instrs, {entry_state(), labels}, fn instr, {state, acc} ->
        state = if match?({:label, _}, instr), do: join(state, Map.get(labels, elem(instr, 1), :none)), else: state
        {after_state, edges} = step(instr, state)

        acc =
          Enum.reduce(edges, acc, fn {label, s}, acc ->
            if s == :none, do: acc, else: Map.update(acc, label, s, &join(&1, s))
          end)

        {after_state, acc}
      end)

    if next == labels, do: labels, else: label_states(instrs, next)
  end

  # The state after an instruction and the {label, state} edges it may jump along.
  defp step(_instr, :none), do: {:none, []}
  defp step({:label, _}, s), do: {s, []}
  defp step({:line, _}, s), do: {s, []}
  defp step({:move, src, dst}, s), do: {put(s, dst, value(s, src)), []}

  defp step({:swap, a, b}, s) do
    va = value(s, a)
    vb = value(s, b)
    {s |> put(a, vb) |> put(b, va), []}
  end

  defp step(:build_stacktrace, {_xs, ys}), do: {{%{0 => MapSet.new([:stacktrace])}, ys}, []}
  defp step({op, _, _}, {xs, _ys}) when op in [:allocate, :allocate_zero], do: {{xs, %{}}, []}
  defp step({op, _, _, _}, {xs, _ys}) when op in [:allocate_heap, :allocate_heap_zero], do: {{xs, %{}}, []}
  defp step({:deallocate, _}, {xs, _ys}), do: {{xs, %{}}, []}

  defp step({:trim, n, _remaining}, {xs, ys}),
    do: {{xs, for({k, v} <- ys, k >= n, into: %{}, do: {k - n, v})}, []}

  defp step({:init_yregs, {:list, regs}}, s), do: {Enum.reduce(regs, s, &put(&2, &1, lit([]))), []}
  defp step({:init, reg}, s), do: {put(s, reg, lit([])), []}
  defp step({:test_heap, _, _}, s), do: {s, []}
  # Tests with a destination are the six-element form; the others write nothing.
  defp step({:test, _name, fail, args}, s) when is_list(args), do: {s, edge(fail, s)}
  defp step({:test, :has_map_fields, fail, _src, {:list, _}}, s), do: {s, edge(fail, s)}
  defp step({:test, _name, fail, _live, _args, dst}, s), do: {put(s, dst, nil), edge(fail, s)}
  defp step({:jump, {:f, l}}, s), do: {:none, [{l, s}]}
  defp step({op, _src, fail, {:list, list}}, s) when op in [:select_val, :select_tuple_arity],
    do: {:none, edge(fail, s) ++ Enum.flat_map(list, &edge(&1, s))}

  defp step({op, _arity, _target}, {_xs, ys}) when op in [:call, :call_ext], do: {{%{}, ys}, []}
  defp step({:call_fun, _arity}, {_xs, ys}), do: {{%{}, ys}, []}
  defp step({:call_fun2, _tag, _arity, _fun}, {_xs, ys}), do: {{%{}, ys}, []}
  defp step({:apply, _arity}, {_xs, ys}), do: {{%{}, ys}, []}
  defp step({:bif, _name, fail, _args, dst}, s), do: {put(s, dst, nil), edge(fail, s)}
  defp step({:gc_bif, _name, fail, _live, _args, dst}, s), do: {put(s, dst, nil), edge(fail, s)}
  defp step({:get_tuple_element, _src, _index, dst}, s), do: {put(s, dst, nil), []}
  defp step({:get_list, _src, h, t}, s), do: {s |> put(h, nil) |> put(t, nil), []}
  defp step({op, _src, dst}, s) when op in [:get_hd, :get_tl], do: {put(s, dst, nil), []}
  defp step({:put_list, _h, _t, dst}, s), do: {put(s, dst, nil), []}
  defp step({:put_tuple2, dst, _list}, s), do: {put(s, dst, nil), []}
  defp step({:make_fun3, _mfa, _index, _uniq, dst, _env}, s), do: {put(s, dst, nil), []}

  defp step({op, fail, _src, dst, _live, _list}, s) when op in [:put_map_assoc, :put_map_exact],
    do: {put(s, dst, nil), edge(fail, s)}

  defp step({:get_map_elements, fail, _src, {:list, list}}, s) do
    dsts = list |> Enum.drop(1) |> Enum.take_every(2)
    {Enum.reduce(dsts, s, &put(&2, &1, nil)), edge(fail, s)}
  end

  defp step({op, y, {:f, l}}, s) when op in [:try, :catch] do
    s = put(s, y, nil)
    {s, [{l, s}]}
  end

  defp step({:try_end, y}, s), do: {put(s, y, nil), []}
  defp step({:try_case, y}, {_xs, ys}), do: {put({%{2 => MapSet.new([:stacktrace])}, ys}, y, nil), []}
  defp step({:catch_end, y}, {_xs, ys}), do: {put({%{}, ys}, y, nil), []}

  defp step(instr, _s)
       when instr in [:return, :if_end] or elem(instr, 0) in [:func_info, :badmatch, :case_end, :try_case_end, :badrecord, :raise] or
              elem(instr, 0) in [:call_only, :call_last, :call_ext_only, :call_ext_last, :apply_last],
       do: {:none, []}

  # Anything else: forget every x register and the y registers it names; jump targets it names
  # get that state too (an over-approximation: it can only make a contextual call unprovable).
  defp step(instr, {_xs, ys}) do
    mentioned = regs_in(instr, [])
    s = {%{}, Map.drop(ys, for({:y, n} <- mentioned, do: n))}
    {s, for({:f, l} <- mentioned, l != 0, do: {l, s})}
  end

  defp edge({:f, 0}, _s), do: []
  defp edge({:f, l}, s), do: [{l, s}]
  defp edge(_, _s), do: []

  defp regs_in({:x, n} = r, acc) when is_integer(n), do: [r | acc]
  defp regs_in({:y, n} = r, acc) when is_integer(n), do: [r | acc]
  defp regs_in({:f, n} = r, acc) when is_integer(n), do: [r | acc]
  defp regs_in({:literal, _}, acc), do: acc
  defp regs_in(t, acc) when is_tuple(t), do: t |> Tuple.to_list() |> Enum.reduce(acc, &regs_in/2)
  defp regs_in(t, acc) when is_list(t), do: Enum.reduce(t, acc, &regs_in/2)
  defp regs_in(_t, acc), do: acc

  defp value(s, {:tr, reg, _type}), do: value(s, reg)
  defp value({xs, _}, {:x, n}), do: Map.get(xs, n)
  defp value({_, ys}, {:y, n}), do: Map.get(ys, n)
  defp value(_s, {:literal, t}), do: lit(t)
  defp value(_s, {:atom, a}), do: lit(a)
  defp value(_s, {:integer, i}), do: lit(i)
  defp value(_s, nil), do: lit([])
  defp value(_s, _), do: nil

  defp lit(term), do: MapSet.new([{:lit, term}])

  defp put(:none, _reg, _v), do: :none
  defp put(s, {:tr, reg, _type}, v), do: put(s, reg, v)
  defp put({xs, ys}, {:x, n}, nil), do: {Map.delete(xs, n), ys}
  defp put({xs, ys}, {:x, n}, v), do: {Map.put(xs, n, v), ys}
  defp put({xs, ys}, {:y, n}, nil), do: {xs, Map.delete(ys, n)}
  defp put({xs, ys}, {:y, n}, v), do: {xs, Map.put(ys, n, v)}
  defp put(s, _other, _v), do: s

  ## Line table

  # The "Line" chunk: index => source line. Items are compact-encoded: an atom tag switches file,
  # an integer is the line of the next index (index 0 is "no location").
  defp line_table(binary) do
    case :beam_lib.chunks(binary, [~c"Line"]) do
      {:ok, {_, [{_, <<_version::32, _flags::32, _instrs::32, count::32, _names::32, items::binary>>}]}} ->
        decode_lines(items, count, 1, %{})

      _ ->
        %{}
    end
  rescue
    _ -> %{}
  end

  defp decode_lines(_items, 0, _index, acc), do: acc

  defp decode_lines(items, left, index, acc) do
    case compact(items) do
      {2, _file, rest} -> decode_lines(rest, left, index, acc)
      {1, line, rest} -> decode_lines(rest, left - 1, index + 1, Map.put(acc, index, line))
      _ -> acc
    end
  end

  # One compact term: {tag, value, rest} (tag 1 integer, 2 atom), or :error.
  defp compact(<<b, rest::binary>>) do
    import Bitwise
    tag = b &&& 7

    cond do
      (b &&& 0x08) == 0 ->
        {tag, b >>> 4, rest}

      (b &&& 0x10) == 0 ->
        case rest do
          <<n, rest::binary>> -> {tag, (b >>> 5 <<< 8) ||| n, rest}
          _ -> :error
        end

      b >>> 5 < 7 ->
        size = (b >>> 5) + 2

        case rest do
          <<v::signed-size(size)-unit(8), rest::binary>> -> {tag, v, rest}
          _ -> :error
        end

      true ->
        :error
    end
  end

  defp compact(_), do: :error
end
