defmodule Fieldline.Compiler do
  @moduledoc """
  From source to a loaded module, once per parser version: parse the source, find the single
  top-level `defmodule Parser`, check its AST against `Fieldline.AllowList`, rename it to a module
  of its own (so many tenants' `Parser`s live in one VM), rewrite `expr.field` into a map-only
  access and regex calls into `Fieldline.SafeRegex`, then compile it in a separate process under
  time and heap limits (module bodies run at compile time). The compiled module is not loaded:
  `Fieldline.BeamCheck` verifies its BEAM first, and only a module that passes is loaded
  (`:code.load_binary`). Loaded modules are the cache.
  """

  @max_source_bytes 262_144
  @compile_timeout_ms 10_000
  @compile_heap_words 64 * 1024 * 1024

  @doc """
  Checks without loading anything. `{:ok, warnings}` or `{:error, problems}`, both `[{line,
  message}]`: warnings are what the compiler warns about (unused variables, ...) and a missing
  `use Platform.Parsing.Behaviour`; they do not reject the parser.
  """
  def check(source) do
    module = target_module("check")

    result =
      with :ok <- runtime_ready(),
           {:ok, ast} <- prepare(source, "check"),
           {:ok, _binary, warnings} <- compile_verified(ast, module) do
        {:ok, by_line(behaviour_warning(ast) ++ warnings)}
      end

    present(result, module)
  end

  defp by_line(list), do: Enum.sort_by(list, fn {line, msg} -> {line || 0, msg} end)

  @doc "The warnings of the last compile of `module` in this process (see `load/2`), else `[]`."
  def warnings(module), do: Process.get({:fieldline_warnings, module}, [])

  @doc "The compiled module for a parser version (`key`: a short id of the source), compiling on first use."
  def load(key, source) do
    module = target_module(key)

    if :erlang.function_exported(module, :parse, 2) do
      {:ok, module}
    else
      with :ok <- runtime_ready(),
           {:ok, ast} <- prepare(source, key),
           {:ok, binary, warnings} <- compile_verified(ast, module),
           :ok <- defines_parse(module, binary),
           {:module, ^module} <- :code.load_binary(module, ~c"parser.ex", binary) do
        {:ok, warnings} = present({:ok, by_line(behaviour_warning(ast) ++ warnings)}, module)
        Process.put({:fieldline_warnings, module}, warnings)
        {:ok, module}
      else
        {:error, problems} when is_list(problems) -> present({:error, problems}, module)
        {:error, reason} -> {:error, [{nil, "loading failed: #{public(inspect(reason))}"}]}
      end
    end
  end

  @doc """
  Whether this VM may compile parsers: the protocols parser code dispatches through must be
  consolidated with exactly the allowed implementations (the build's `parsers/consolidated`
  directory first in the code path). Otherwise a forged struct reaches any implementation on the
  code path (`Enumerable.File.Stream` reads files), so nothing is compiled at all.
  """
  def runtime_ready do
    problems =
      for {protocol, allowed} <- Fieldline.AllowList.protocol_impls(),
          problem = protocol_problem(protocol, allowed),
          do: {nil, problem}

    if problems == [], do: :ok, else: {:error, problems}
  end

  defp protocol_problem(protocol, allowed) do
    case Code.ensure_loaded(protocol) && protocol.__protocol__(:impls) do
      {:consolidated, impls} ->
        case impls -- allowed do
          [] -> nil
          extra -> "sandbox runtime: #{inspect(protocol)} dispatches to #{inspect(extra)}; refusing to compile parsers"
        end

      _ ->
        "sandbox runtime: #{inspect(protocol)} is not consolidated; refusing to compile parsers"
    end
  end

  # Compiles a prepared AST without loading it and verifies the BEAM, in a limited process:
  # {:ok, binary, warnings} or {:error, problems}.
  defp compile_verified(ast, module) do
    result =
      in_limited_process(fn ->
        try do
          case compile_unloaded(ast) do
            {[{^module, binary}], warnings} ->
              with :ok <- Fieldline.BeamCheck.verify(module, binary), do: {:ok, binary, warnings}

            {modules, _warnings} ->
              for {m, _} <- modules, do: purge(m)
              {:error, [{nil, "a parser defines exactly one module, got #{inspect(Enum.map(modules, &elem(&1, 0)))}"}]}
          end
        rescue
          e -> {:error, [{error_line(e, __STACKTRACE__), error_message(e)}]}
        end
      end)

    case result do
      {:ok, binary, warnings} -> {:ok, binary, warnings}
      {:error, problems} -> {:error, problems}
      {:failed, reason} -> {:error, [{nil, "compiling failed: #{reason}"}]}
    end
  end

  # A compile error without the "parser.ex:N: " its message starts with (the line is given apart),
  # with a hint where `use Platform.Parsing.Behaviour` would have defined the function.
  defp error_message(%CompileError{description: description}) when is_binary(description) do
    case Regex.run(~r/^undefined function (get|get_last_reading|json_decode)\/\d/, description) do
      [_, _] -> description <> " (it comes with `use Platform.Parsing.Behaviour`)"
      nil -> description
    end
  end

  defp error_message(e), do: Exception.message(e)

  # The parser's module is `Parser` to its author, whatever the runtime renamed it to.
  defp present({:ok, warnings}, module), do: {:ok, Enum.map(warnings, &public_problem(&1, module))}
  defp present({:error, problems}, module), do: {:error, Enum.map(problems, &public_problem(&1, module))}
  defp present(other, _module), do: other

  defp public_problem({line, message}, module) when is_binary(message),
    do: {line, message |> String.replace(inspect(module), "Parser") |> public()}

  defp public_problem(other, _module), do: other

  @doc "`text` with every name of a renamed parser module (`FieldlineParsers.P<key>`) shown as `Parser`."
  def public(text) when is_binary(text),
    do: String.replace(text, ~r/:?"?(Elixir\.)?FieldlineParsers\.P[A-Za-z0-9_]*"?/, "Parser")

  @uses_behaviour {:__aliases__, [], [:Platform, :Parsing, :Behaviour]}

  # A parser without `use Platform.Parsing.Behaviour` lacks get/2,3, get_last_reading/2,
  # json_decode/1 and the default fields/0 and tests/0.
  defp behaviour_warning({:defmodule, meta, [_name, [do: body]]}) do
    top =
      case body do
        {:__block__, _, exprs} -> exprs
        expr -> [expr]
      end

    uses? =
      Enum.any?(top, fn
        {:use, _, [{:__aliases__, _, parts} | _]} -> {:__aliases__, [], parts} == @uses_behaviour
        _ -> false
      end)

    if uses?,
      do: [],
      else: [
        {Keyword.get(meta, :line),
         "Parser does not `use Platform.Parsing.Behaviour` (get/2, json_decode/1, get_last_reading/2 " <>
           "and the default fields/0 and tests/0 come with it)"}
      ]
  end

  defp behaviour_warning(_), do: []

  # `@compile {:autoload, false}` keeps the module out of the code server; calling the compiler
  # below Code.compile_quoted skips the parallel checker, which would need the module loaded (it
  # calls `__struct__/0` of a module's own struct) and would run `@after_verify` hooks.
  #
  # The compiler's warnings reach the process named in `:elixir_compiler_info` (as they reach
  # Kernel.ParallelCompiler): a collector of our own, linked (it ends with this process), that also
  # answers what the compiler asks the parallel compiler (a module is available: ack; wait for a
  # module: not found, as without it). Returns {modules, warnings}.
  defp compile_unloaded({:defmodule, meta, [name, [do: body]]}) do
    Process.delete(:elixir_checker_info)
    collector =
      :erlang.spawn_opt(fn -> collect_warnings([], 0) end, [
        :link,
        {:max_heap_size, %{size: 1_000_000, kill: true, error_logger: false}}
      ])

    Process.put(:elixir_compiler_info, {collector, self()})
    no_load = quote(do: @compile({:autoload, false}))
    ast = {:defmodule, meta, [name, [do: {:__block__, [], [no_load, body]}]]}

    modules =
      try do
        :elixir_compiler.quoted(ast, "parser.ex", fn _file, _lexical -> :ok end)
      after
        Process.delete(:elixir_compiler_info)
      end

    ref = make_ref()
    send(collector, {:done, self(), ref})

    warnings =
      receive do
        {^ref, warnings} -> warnings
      after
        1000 -> []
      end

    {modules, warnings}
  end

  # At most this many warnings of at most 4 KiB each (Fieldline.Runner.bounded/1).
  @max_warnings 100

  defp collect_warnings(acc, count) do
    receive do
      {:warning, _file, line, message} when count < @max_warnings ->
        text = message |> IO.chardata_to_string() |> Fieldline.Runner.bounded()
        collect_warnings([{warning_line(line), text} | acc], count + 1)

      {:module_available, pid, ref, _file, _module, _binary} ->
        send(pid, {ref, :ack})
        collect_warnings(acc, count)

      {:waiting, _kind, pid, ref, _file_pid, _module, _modules, _deadlock} ->
        send(pid, {ref, :not_found})
        collect_warnings(acc, count)

      {:done, from, ref} ->
        send(from, {ref, acc |> Enum.reverse() |> Enum.uniq()})

      _ ->
        collect_warnings(acc, count)
    end
  end

  defp warning_line(line) when is_integer(line) and line > 0, do: line
  defp warning_line({line, _column}) when is_integer(line) and line > 0, do: line
  defp warning_line(_), do: nil

  defp defines_parse(module, binary) do
    case :beam_lib.chunks(binary, [:exports]) do
      {:ok, {^module, [exports: exports]}} ->
        if {:parse, 2} in exports, do: :ok, else: {:error, [{nil, "Parser must define parse/2"}]}

      _ ->
        {:error, [{nil, "the compiled parser could not be read"}]}
    end
  end

  defp target_module(key), do: Module.concat([FieldlineParsers, "P" <> key])

  defp purge(module) do
    :code.purge(module)
    :code.delete(module)
    :code.purge(module)
  end

  @doc "Parses, checks and rewrites; `{:ok, ast}` or `{:error, [{line, message}]}`."
  def prepare(source, key) when is_binary(source) do
    cond do
      byte_size(source) > @max_source_bytes ->
        {:error, [{nil, "parser source exceeds #{@max_source_bytes} bytes"}]}

      not String.valid?(source) ->
        {:error, [{nil, "parser source is not valid UTF-8"}]}

      true ->
        case Code.string_to_quoted(source, file: "parser.ex", columns: false) do
          {:ok, ast} -> check_and_rewrite(ast, key)
          {:error, {meta, message, token}} -> {:error, [{syntax_line(meta), "syntax error: #{flatten(message)}#{token}"}]}
        end
    end
  end

  def prepare(_, _), do: {:error, [{nil, "parser source must be a string"}]}

  defp check_and_rewrite(ast, key) do
    case ast do
      {:defmodule, meta, [{:__aliases__, _, [:Parser]}, [do: _body]] = args} ->
        marked = {:defmodule, Keyword.put(meta, :fieldline_top, true), args}

        case Fieldline.AllowList.check(marked) do
          :ok -> {:ok, rewrite(marked, key)}
          {:error, _} = error -> error
        end

      _ ->
        {:error, [{nil, "a parser is exactly one `defmodule Parser do ... end`"}]}
    end
  end

  defp rewrite(ast, key) do
    own = [:FieldlineParsers, String.to_atom("P" <> key)]

    ast
    |> keep_frames(own)
    |> Macro.prewalk(fn
      {:__aliases__, meta, [:Parser | rest]} ->
        {:__aliases__, meta, own ++ rest}

      # Regex.f(...) and the String functions and `=~` that take a regex: through the wrapper that
      # rebuilds the regex from its source (a forged compiled pattern crashes the VM).
      {{:., meta, [{:__aliases__, _, [:Regex]}, fun]}, call_meta, args} ->
        {{:., meta, [{:__aliases__, meta, [:Fieldline, :SafeRegex]}, fun]}, call_meta, args}

      {{:., meta, [Regex, fun]}, call_meta, args} ->
        {{:., meta, [{:__aliases__, meta, [:Fieldline, :SafeRegex]}, fun]}, call_meta, args}

      {{:., meta, [{:__aliases__, _, [:String]}, fun]}, call_meta, args} when fun in [:split, :replace, :match?] ->
        {{:., meta, [{:__aliases__, meta, [:Fieldline, :SafeString]}, fun]}, call_meta, args}

      {{:., meta, [{:__aliases__, _, [:Kernel]}, :=~]}, call_meta, [_, _] = args} ->
        {{:., meta, [{:__aliases__, meta, [:Fieldline, :SafeRegex]}, :match_op]}, call_meta, args}

      {:=~, meta, [_, _] = args} ->
        {{:., meta, [{:__aliases__, meta, [:Fieldline, :SafeRegex]}, :match_op]}, meta, args}

      {:&, meta, [{:/, slash_meta, [{:=~, op_meta, ctx}, 2]}]} when is_atom(ctx) ->
        call = {{:., op_meta, [{:__aliases__, op_meta, [:Fieldline, :SafeRegex]}, :match_op]}, [no_parens: true] ++ op_meta, []}
        {:&, meta, [{:/, slash_meta, [call, 2]}]}

      # expr.field (no parentheses, no arguments) on anything but a module: map access only.
      {{:., meta, [target, field]}, call_meta, []} = node when is_atom(field) ->
        if Keyword.get(call_meta, :no_parens, false) and not module_target?(target) do
          {{:., meta, [{:__aliases__, meta, [:Fieldline, :Runtime]}, :field!]}, call_meta, [target, field]}
        else
          node
        end

      node ->
        node
    end)
  end

  # Every def's last call (in tail position) is wrapped in Fieldline.Runtime.returned/1 so that an
  # error it raises keeps the function's frame and line ("(parser line N)"); calls of the module's
  # own functions stay tail calls (a recursive loop must not grow the stack).
  defp keep_frames({:defmodule, meta, [name, [do: body]]}, own) do
    locals = local_names(body)

    body =
      Macro.prewalk(body, fn
        {kind, m, [head, [{:do, def_body} | rest]]} when kind in [:def, :defp] ->
          {kind, m, [head, [{:do, tail_kept(def_body, locals, own)} | rest]]}

        node ->
          node
      end)

    {:defmodule, meta, [name, [do: body]]}
  end

  defp keep_frames(ast, _own), do: ast

  defp local_names(body) do
    {_, names} =
      Macro.prewalk(body, MapSet.new(), fn
        {kind, _, [head | _]} = node, acc when kind in [:def, :defp] -> {node, MapSet.put(acc, def_name(head))}
        node, acc -> {node, acc}
      end)

    names
  end

  defp def_name({:when, _, [head | _]}), do: def_name(head)
  defp def_name({name, _, _}) when is_atom(name), do: name
  defp def_name(_), do: nil

  # Forms that are not calls (or whose tails are handled inside), never wrapped themselves.
  @not_calls [:__block__, :case, :cond, :if, :unless, :with, :fn, :&, :=, :{}, :%{}, :%, :<<>>, :__aliases__,
              :__MODULE__, :^, :for, :try, :receive, :quote, :unquote, :super, :"::", :->, :when, :@, :&&, :||,
              :and, :or]

  defp tail_kept({:__block__, m, [_ | _] = exprs}, locals, own),
    do: {:__block__, m, List.replace_at(exprs, -1, tail_kept(List.last(exprs), locals, own))}

  defp tail_kept({form, m, [subject, [do: clauses]]}, locals, own) when form in [:case] and is_list(clauses),
    do: {form, m, [subject, [do: clauses_kept(clauses, locals, own)]]}

  defp tail_kept({:cond, m, [[do: clauses]]}, locals, own) when is_list(clauses),
    do: {:cond, m, [[do: clauses_kept(clauses, locals, own)]]}

  defp tail_kept({form, m, [condition, branches]}, locals, own) when form in [:if, :unless] and is_list(branches),
    do: {form, m, [condition, Enum.map(branches, fn {k, b} -> {k, tail_kept(b, locals, own)} end)]}

  # A pipe is a call of its last stage.
  defp tail_kept({:|>, _, [_, last]} = pipe, locals, own) do
    if own_call?(last, locals, own), do: pipe, else: returned(pipe)
  end

  defp tail_kept({name, _, args} = call, locals, _own) when is_atom(name) and is_list(args) do
    if name in @not_calls or MapSet.member?(locals, name), do: call, else: returned(call)
  end

  defp tail_kept({{:., _, [target, _fun]}, _, args} = call, _locals, own) when is_list(args) do
    if own_module?(target, own), do: call, else: returned(call)
  end

  defp tail_kept(other, _locals, _own), do: other

  defp own_call?({name, _, args}, locals, _own) when is_atom(name) and is_list(args), do: MapSet.member?(locals, name)
  defp own_call?({{:., _, [target, _]}, _, args}, _locals, own) when is_list(args), do: own_module?(target, own)
  defp own_call?(_, _locals, _own), do: false

  defp clauses_kept(clauses, locals, own) do
    Enum.map(clauses, fn
      {:->, m, [patterns, body]} -> {:->, m, [patterns, tail_kept(body, locals, own)]}
      other -> other
    end)
  end

  defp own_module?({:__aliases__, _, [:Parser | _]}, _own), do: true
  defp own_module?({:__aliases__, _, parts}, own), do: parts == own
  defp own_module?({:__MODULE__, _, _}, _own), do: true
  defp own_module?(_, _own), do: false

  defp returned({_, meta, _} = call),
    do: {{:., meta, [{:__aliases__, meta, [:Fieldline, :Runtime]}, :returned]}, meta, [call]}

  defp module_target?({:__aliases__, _, _}), do: true
  defp module_target?({:__MODULE__, _, _}), do: true
  defp module_target?(atom) when is_atom(atom), do: true
  defp module_target?(_), do: false

  @doc """
  Runs `fun` in a fresh process with a heap cap and a deadline; `{:failed, reason}` when it dies
  or overruns. Compile-time code of a parser runs here, so it is bounded like a parse.
  """
  def in_limited_process(fun, timeout \\ @compile_timeout_ms, heap_words \\ @compile_heap_words) do
    parent = self()
    ref = make_ref()

    {pid, mref} =
      :erlang.spawn_opt(
        fn -> send(parent, {ref, fun.()}) end,
        [:monitor, {:max_heap_size, %{size: heap_words, kill: true, error_logger: false}}]
      )

    receive do
      {^ref, result} ->
        Process.demonitor(mref, [:flush])
        result

      {:DOWN, ^mref, :process, _, :killed} ->
        {:failed, "heap limit reached"}

      {:DOWN, ^mref, :process, _, reason} ->
        {:failed, inspect(reason, limit: 10)}
    after
      timeout ->
        Process.exit(pid, :kill)
        Process.demonitor(mref, [:flush])
        {:failed, "took longer than #{timeout} ms"}
    end
  end

  # The line an error names, else the innermost frame in parser code (code run at compile time).
  defp error_line(%{line: line}, _stacktrace) when is_integer(line), do: line

  defp error_line(_error, stacktrace) do
    Enum.find_value(stacktrace, fn
      {_m, _f, _a, info} -> if info[:file] == ~c"parser.ex", do: info[:line]
      _ -> nil
    end)
  end

  defp syntax_line(meta) when is_list(meta), do: Keyword.get(meta, :line)
  defp syntax_line(line) when is_integer(line), do: line
  defp syntax_line(_), do: nil

  defp flatten(message) when is_binary(message), do: message
  defp flatten({a, b}), do: flatten(a) <> flatten(b)
  defp flatten(other), do: to_string(other)
end
