# The language layer on its own (ctest runs this with the built runtime and the consolidated
# protocols first in the code path, as workers have them): the BEAM check without the AST check in
# front of it, the AST check's fixes, compile-without-load, the regex wrapper, protocol dispatch, and
# an audit of every dispatch by name that the allowed modules do.
ExUnit.start()
Calendar.put_time_zone_database(Fieldline.TzDb)

defmodule LanguageLayer.Helpers do
  @doc """
  Compiles `body` into a module WITHOUT the AST check, the rewrites or loading, and returns the BEAM
  check's verdict: proof that the BEAM check alone catches each trick. Line 1 is `defmodule`, so the
  body's first line is line 2.
  """
  def beam_only(body), do: beam_only_source("defmodule X do\n" <> body <> "\nend\n")

  def beam_only_source(source) do
    name = :"Elixir.BeamOnly#{System.unique_integer([:positive])}"
    {:defmodule, meta, [_, [do: block]]} = Code.string_to_quoted!(source, columns: false)
    no_load = quote(do: @compile({:autoload, false}))
    ast = {:defmodule, meta, [name, [do: {:__block__, [], [no_load, block]}]]}
    [{^name, binary}] = :elixir_compiler.quoted(ast, "parser.ex", fn _, _ -> :ok end)
    false = :erlang.module_loaded(name)
    Fieldline.BeamCheck.verify(name, binary)
  end

  def ast_check(body) do
    {:ok, {:defmodule, meta, args}} = Code.string_to_quoted("defmodule Parser do\n" <> body <> "\nend", columns: false)
    Fieldline.AllowList.check({:defmodule, Keyword.put(meta, :fieldline_top, true), args})
  end

  def parser(body), do: "defmodule Parser do\n  use Platform.Parsing.Behaviour\n" <> body <> "\nend\n"
end

defmodule BeamCheckTest do
  use ExUnit.Case, async: true
  import LanguageLayer.Helpers

  defp rejects(body, line, text) do
    assert {:error, problems} = beam_only(body)
    assert Enum.any?(problems, fn {l, m} -> l == line and String.contains?(m, text) end), inspect(problems)
  end

  test "ordinary code passes (raise, rescue, reraise, interpolation, for, structs, Logger)" do
    body = """
    require Logger
    defstruct [:a]
    def f(x) do
      Logger.info("x=\#{x}")
      y = try do
        raise ArgumentError, "no"
      rescue
        e in ArgumentError -> e
        e -> reraise e, __STACKTRACE__
      catch
        :throw, v -> v
      end
      for(i <- [x], into: %{}, do: {i, %__MODULE__{a: y}})
    end
    def g(x), do: raise(x)
    def h(x), do: {__MODULE__.f(x), &__MODULE__.g/1}
    """

    assert :ok = beam_only(body)
  end

  test "an alias of a forbidden module under an allowed name is a call to that module" do
    rejects("alias :os, as: Map\ndef f(_), do: Map.cmd(~c\"id\")", 3, "call to :os.cmd/1 is not allowed")
  end

  test "defdelegate to :os, File and System" do
    rejects("defdelegate cmd(c), to: :os", 2, "call to :os.cmd/1 is not allowed")
    rejects("defdelegate read(p), to: File, as: :read!", 2, "call to File.read!/1 is not allowed")
    rejects("defdelegate env(k), to: System, as: :get_env", 2, "call to System.get_env/1 is not allowed")
  end

  test "import with only: makes a local call that is still the remote call" do
    rejects("import File, only: [read!: 1]\ndef f(p), do: read!(p)", 3, "call to File.read!/1 is not allowed")
  end

  test "captures of forbidden functions" do
    rejects("def f, do: &:os.cmd/1", 2, "capture of :os.cmd/1 is not allowed")
    rejects("def f, do: [x: {&File.read!/1}]", 2, "capture of File.read!/1 is not allowed")
  end

  test "Function.capture and :erlang.make_fun build funs from data" do
    rejects("def f(m), do: Function.capture(m, :cmd, 1)", 2, "call to :erlang.make_fun/3 is not allowed")
    rejects("def f(m), do: :erlang.make_fun(m, :cmd, 1)", 2, "call to :erlang.make_fun/3 is not allowed")
  end

  test "dynamic module or function from a variable, a map field or a list" do
    # The compiler propagates the constant: the BEAM holds the plain call to :os.cmd/1.
    rejects("def f(_) do\n  m = :os\n  m.cmd(~c\"id\")\nend", 4, "call to :os.cmd/1 is not allowed")
    rejects("def f(%{mod: m}), do: m.cmd(~c\"id\")", 2, "dynamic call")
    rejects("def f(_), do: Enum.map([:os], & &1.cmd(~c\"id\"))", 2, "dynamic call")
    rejects("def f(m, a), do: apply(m, :cmd, a)", 2, "call to :erlang.apply/3 is not allowed: dynamic call")
    rejects("def f(g, args), do: Kernel.apply(g, args)", 2, "call to :erlang.apply/2 is not allowed: dynamic call")
  end

  test "unquote in a function head cannot hide the call in the body" do
    rejects("for name <- [:cmd] do\n  def unquote(name)(c), do: :os.unquote(name)(c)\nend", 3, "call to :os.cmd/1")
  end

  test "send, receive and spawn" do
    rejects("def f(p), do: send(p, :x)", 2, "call to :erlang.send/2 is not allowed: message passing")
    # receive instructions carry no line of their own: the function's line is named.
    rejects("def f do\n  receive do\n    x -> x\n  end\nend", 2, "receive is not allowed")
    rejects("def f, do: spawn(fn -> :ok end)", 2, "call to :erlang.spawn/1 is not allowed: processes")
  end

  test "atoms from data" do
    rejects("def f(x), do: :\"a\#{x}\"", 2, "call to :erlang.binary_to_atom/2 is not allowed: it creates atoms")
    rejects("def f(x), do: ~w(a \#{x})a", 2, "capture of String.to_atom/1 is not allowed: it creates atoms")
    rejects("def f(x), do: List.to_atom(x)", 2, "call to :erlang.list_to_atom/1 is not allowed")
    rejects("def f(x), do: Module.concat([x])", 2, "call to Module.concat/1 is not allowed")
  end

  test "error_info can only be the one raise passes, and stacktraces only the VM's" do
    rejects("def f, do: :erlang.error(:badarg, :none, error_info: %{module: :os, function: :cmd})", 2,
            "call to :erlang.error/3 is not allowed")

    rejects("def f, do: :erlang.raise(:error, :badarg, [{:os, :cmd, 2, [error_info: %{module: :os}]}])", 2,
            "call to :erlang.raise/3 is not allowed")

    rejects("def f(st), do: Exception.normalize(:error, :badarg, st)", 2, "call to Exception.normalize/3 is not allowed")
    rejects("def f(e), do: reraise(e, [])", 2, "call to :erlang.raise/3 is not allowed")
  end

  test "module_info is generated; get_module_info elsewhere is refused" do
    rejects("def f, do: :erlang.get_module_info(File)", 2, "call to :erlang.get_module_info/1 is not allowed")
    rejects("def f, do: :erlang.get_module_info(__MODULE__, :compile)", 2, "get_module_info/2 is not allowed")
  end

  test "@on_load and hidden regex calls" do
    rejects("@on_load :boot\ndef boot, do: :ok", 3, "@on_load is not allowed")
    rejects("import Regex\ndef f(r, s), do: run(r, s)", 3, "call to Regex.run/2 is not allowed")
    rejects("def f(s), do: Enum.map([s], &String.split(&1, \",\"))", 2, "call to String.split/2 is not allowed")
  end

  test "arity counts: exit/1 is fine, exit/2 (Process.exit) is not; functions must exist" do
    assert :ok = beam_only("def f, do: exit(:normal)")
    rejects("def f(p), do: :erlang.exit(p, :kill)", 2, "call to :erlang.exit/2 is not allowed")
    rejects("def f, do: Enum.nope(1)", 2, "undefined function Enum.nope/1")
    rejects("def f, do: Kernel.\"MACRO-def\"(__ENV__, :x)", 2, "macros are expanded at compile time")
    rejects("def f(m), do: macro_exported?(m, :x, 1)", 2, "call to Kernel.macro_exported?/3 is not allowed")
  end
end

defmodule HostileBeamOnlyTest do
  @moduledoc """
  Every hostile parser of the sandbox suite, compiled without the AST check in front: whatever the
  AST check refuses, the BEAM check refuses too, and what it lets through (to be contained at run
  time) passes the BEAM check as well, but for @beam_only, which only the BEAM check catches.
  Except these, each for the reason given.
  """
  use ExUnit.Case, async: true
  import LanguageLayer.Helpers

  @dir Path.expand("../sandbox/hostile", __DIR__)
  @not_compiled_here %{
    "compile_time_loop" => "runs forever at compile time",
    "compile_time_read" => "reads a file at compile time: only the AST check runs before that",
    "compile_time_forged_stream" => "runs at compile time (the consolidated protocols stop it)",
    "require_compile_env" => "reads the application environment at compile time",
    "nested_module" => "two modules: Fieldline.Compiler refuses it before the BEAM check",
    "import_erlang" => "does not compile (:erlang.alias/1 conflicts with a special form)",
    "sigil_date_calendar" => "the sigil calls its calendar module while the module compiles"
  }
  # Allowed by the AST check, refused only in the compiled code.
  @beam_only ["regex_hidden_by_import", "regex_hidden_by_alias"]
  @ast_only %{
    "macro_in_function_head" => "unquote(Macro.var(...)) compiles to an ordinary function head",
    "kernel_apply_fun" => "apply of the parser's own fun compiles to a plain call of that fun"
  }

  for file <- Path.wildcard(Path.join(@dir, "*.ex")), name = Path.basename(file, ".ex"),
      not Map.has_key?(@not_compiled_here, name) do
    @file_path file
    @name name
    test "hostile/#{name}" do
      source = File.read!(@file_path)
      {:ok, {:defmodule, meta, args}} = Code.string_to_quoted(source, columns: false)
      ast_verdict = Fieldline.AllowList.check({:defmodule, Keyword.put(meta, :fieldline_top, true), args})

      case ast_verdict do
        # Accepted: the whole compiler (with its rewrites) accepts it too, to be contained at run
        # time, unless the BEAM check finds what the source hid.
        :ok ->
          if @name in @beam_only,
            do: assert({:error, [{line, "call to " <> _} | _]} = Fieldline.Compiler.check(source)) && is_integer(line),
            else: assert({:ok, _warnings} = Fieldline.Compiler.check(source))

        {:error, _} ->
          case beam_only_source(source) do
            :ok -> assert Map.has_key?(@ast_only, @name), "only the AST check refuses #{@name}"
            {:error, problems} -> assert Enum.any?(problems, fn {line, _} -> is_integer(line) end), inspect(problems)
          end
      end
    end
  end
end

defmodule AstCheckTest do
  use ExUnit.Case, async: true
  import LanguageLayer.Helpers

  defp rejects(body, line, text) do
    assert {:error, problems} = ast_check(body)
    assert Enum.any?(problems, fn {l, m} -> l == line and String.contains?(m, text) end), inspect(problems)
  end

  test "aliases, requires, imports and defdelegates of forbidden modules name their line" do
    rejects("alias :file, as: Map\ndef parse(_, _), do: Map.read_file(\"/etc/passwd\")", 2, "alias of :file is not allowed")
    rejects("alias :file, as: Map\ndef parse(_, _), do: Map.read_file(\"/etc/passwd\")", 3, "call to :file.read_file")
    rejects("require :os\ndef parse(_, _), do: []", 2, "require of :os is not allowed")
    rejects("import File, only: [read!: 1]\ndef parse(_, _), do: []", 2, "import of File is not allowed")
    rejects("defdelegate cmd(c), to: :os", 2, "call to :os.cmd is not allowed")
    rejects("use GenServer", 2, "use of GenServer is not allowed")
  end

  test "allowed aliases and narrowed imports still pass" do
    assert :ok = ast_check("alias Timex.Interval\ndef parse(_, m), do: Interval.new(from: m, until: [days: 1])")
    assert :ok = ast_check("alias Timex.{Interval, Duration}\ndef parse(_, _), do: {Interval, Duration}")
    assert :ok = ast_check("import String, only: [upcase: 1]\ndef parse(s, _), do: upcase(s)")
    assert :ok = ast_check("alias __MODULE__, as: Me\ndef parse(s, _), do: Me.x(s)\ndef x(s), do: s")
  end

  test "Kernel.@, Kernel.defmodule and Kernel.SpecialForms are checked like the local forms" do
    rejects("Kernel.@(on_load(:boot))\ndef boot, do: :ok", 2, "module attribute @on_load is not allowed")
    rejects("@after_verify __MODULE__", 2, "module attribute @after_verify is not allowed")
    rejects("Kernel.defmodule(Evil, do: nil)", 2, "nested defmodule")
    rejects("def parse(_, _), do: Kernel.SpecialForms.receive(do: (x -> x))", 2, "Kernel.SpecialForms.receive")
  end

  test "interpolated atom lists" do
    rejects("def parse(s, _), do: ~w(a \#{s})a", 2, "creates atoms from data")
    assert :ok = ast_check("def parse(_, _), do: ~w(a b)a")
  end
end

defmodule PlatformLibrariesLayerTest do
  @moduledoc "The platform libraries are runtime modules: parser code reaches them only at their entry points."
  use ExUnit.Case, async: true
  import LanguageLayer.Helpers

  @calls """
  def parse(b, _) do
    pts = [%{x: 0, y: 0}, %{x: 2, y: 2}]
    i = Timex.Interval.new(from: ~U[2019-01-01 00:00:00Z], until: [hours: 2], step: [minutes: 60])
    {LibWmbus.Dib.parse_dib(b), Enum.map(i, &Timex.to_unix/1), &Timex.to_datetime/1,
     TimeSeries.fill_gaps(pts, fn _, _ -> [] end, :linear, x_access_path: [Access.elem(1), :x], y_access_path: [:y])}
  end
  """

  test "the calls the reference parsers make pass both checks" do
    assert :ok = ast_check(@calls)
    assert :ok = beam_only(@calls)
  end

  test "other functions of the library modules are refused by both checks" do
    for {body, call} <- [{"def parse(_, _), do: TimeSeries.max_points()", "TimeSeries.max_points"},
                         {"def parse(_, _), do: LibWmbus.Dib.__info__(:functions)", "LibWmbus.Dib.__info__"},
                         {"def parse(_, _), do: &TimeSeries.max_points/0", "TimeSeries.max_points"}] do
      assert {:error, [{2, ast} | _]} = ast_check(body)
      assert ast =~ call
      assert {:error, [{2, beam} | _]} = beam_only(body)
      assert beam =~ call
    end
  end

  test "the library namespace is not a way to other modules" do
    assert {:error, _} = ast_check("def parse(_, _), do: LibWmbus.Evil.run()")
    assert {:error, _} = beam_only("def parse(_, _), do: LibWmbus.Evil.run()")
    # An alias of the namespace resolves: W.Dib is LibWmbus.Dib, W.Evil still nothing.
    assert :ok = ast_check("alias LibWmbus, as: W\ndef parse(b, _), do: W.Dib.parse_dib(b)")
    assert {:error, _} = ast_check("alias LibWmbus, as: W\ndef parse(_, _), do: W.Evil.run()")
  end
end

defmodule CompileWithoutLoadTest do
  use ExUnit.Case, async: false
  import LanguageLayer.Helpers

  test "a parser that fails verification was never loaded, and the next load fails the same way" do
    # Passes the AST check (the module is named through a binding the AST check cannot see), fails
    # the BEAM check.
    src = parser("  def parse(_, _), do: Enum.map([:os], & &1.cmd(~c\"id\"))")
    assert {:error, [{3, "dynamic call" <> _} | _]} = Fieldline.Compiler.load("unloaded1", src)
    refute :erlang.module_loaded(FieldlineParsers.Punloaded1)
    assert {:error, [{3, _} | _]} = Fieldline.Compiler.load("unloaded1", src)
    refute :erlang.module_loaded(FieldlineParsers.Punloaded1)
  end

  test "check compiles without loading anything" do
    assert {:ok, []} = Fieldline.Compiler.check(parser("  def parse(_, _), do: []"))
    refute :erlang.module_loaded(FieldlineParsers.Pcheck)
  end

  test "a module that passes is loaded, and only then" do
    assert {:ok, m} = Fieldline.Compiler.load("loaded1", parser("  def parse(x, _), do: %{x: x}"))
    assert m.parse(1, %{}) == %{x: 1}
  end

  test "a parser's own struct compiles (no type checker needing the module loaded)" do
    src = parser("  defstruct [:a]\n  def parse(x, _), do: %{a: %__MODULE__{a: x}.a}")
    assert {:ok, m} = Fieldline.Compiler.load("ownstruct", src)
    assert m.parse(2, %{}) == %{a: 2}
  end

  test "a VM without the consolidated protocols compiles nothing" do
    ebin = :code.which(Fieldline.Compiler) |> Path.dirname()
    code = "IO.inspect(Fieldline.Compiler.check(\"defmodule Parser do\\ndef parse(_, _), do: []\\nend\"))"
    {out, 0} = System.cmd("elixir", ["-pa", ebin, "-e", code], stderr_to_stdout: true)
    assert out =~ "is not consolidated; refusing to compile parsers"
  end
end

defmodule SafeRegexTest do
  use ExUnit.Case, async: true

  test "a forged compiled pattern is never handed to :re (it would crash the VM)" do
    {:re_pattern, n, u, o, _} = ~r/a(b+)c/.re_pattern
    forged = %{~r/a(b+)c/ | re_pattern: {:re_pattern, n, u, o, <<0, 1, 2, 3>>}}
    assert Fieldline.SafeRegex.run(forged, "xabbc") == ["abbc", "bb"]
    assert Fieldline.SafeRegex.names(forged) == []
    assert Fieldline.SafeString.split("abbcx", forged) == ["", "x"]
    assert Fieldline.SafeRegex.match_op("abc", forged)
    assert_raise ArgumentError, fn -> Fieldline.SafeRegex.names(%{__struct__: Regex, re_pattern: forged.re_pattern}) end
  end

  test "parser code is rewritten to the wrapper" do
    src =
      "defmodule Parser do\n  def parse(s, _), do: {Regex.run(~r/b+/, s), s =~ ~r/c/, String.split(s, ~r/b/), Enum.map([s], &(&1 =~ \"a\"))}\nend\n"

    assert {:ok, m} = Fieldline.Compiler.load("regexrewrite", src)
    assert m.parse("abbc", %{}) == {["bb"], true, ["a", "", "c"], [true]}
  end
end

defmodule ProtocolDispatchTest do
  use ExUnit.Case, async: true

  @file_stream %{__struct__: File.Stream, path: "/etc/hostname", modes: [:raw, :read_ahead, :binary],
                 line_or_bytes: :line, raw: true, node: :nonode@nohost}
  @io_stream %{__struct__: IO.Stream, device: :standard_io, raw: true, line_or_bytes: :line}

  test "the protocols are consolidated with exactly the allowed implementations" do
    assert :ok = Fieldline.Compiler.runtime_ready()

    for {protocol, allowed} <- Fieldline.AllowList.protocol_impls() do
      assert {:consolidated, impls} = protocol.__protocol__(:impls)
      assert Enum.sort(impls) == Enum.sort(allowed)
    end
  end

  test "forged File.Stream and IO.Stream reach no file and no device" do
    assert_raise Protocol.UndefinedError, fn -> Enum.take(@file_stream, 1) end
    assert_raise Protocol.UndefinedError, fn -> Enum.into(["x"], @io_stream) end
    assert_raise Protocol.UndefinedError, fn -> Enum.into(["x"], @file_stream) end
    assert_raise Protocol.UndefinedError, fn -> to_string(@file_stream) end
    assert_raise Protocol.UndefinedError, fn -> to_charlist(@io_stream) end
    # Inspect falls back to Inspect.Any, which only prints the map.
    assert inspect(@file_stream) =~ "File.Stream"
  end
end

defmodule DispatchAuditTest do
  @moduledoc """
  Allowed functions that call a function named by data (a struct's module, a `calendar:` field, a
  sorter module, an exception's module): every module on a worker's code path that exports such a
  function is listed here and reviewed as harmless. A new Elixir/OTP that adds one fails this test.
  """
  use ExUnit.Case, async: true

  # The worker's code path: OTP's applications, Elixir and Logger, our runtime.
  defp worker_path do
    runtime = :code.which(Fieldline.Worker) |> Path.dirname()
    Path.wildcard(Path.join(:code.root_dir(), "lib/*/ebin")) ++
      [:code.lib_dir(:elixir, :ebin), :code.lib_dir(:logger, :ebin), runtime]
  end

  defp exporters do
    for dir <- worker_path(), file <- Path.wildcard(Path.join(to_string(dir), "*.beam")),
        {:ok, {m, [exports: exports]}} <- [:beam_lib.chunks(String.to_charlist(file), [:exports])],
        {f, a} <- exports,
        reduce: %{} do
      acc -> Map.update(acc, {f, a}, [m], &[m | &1])
    end
  end

  defp assert_only(exporters, funs, allowed) do
    for {f, a} <- funs do
      found = exporters |> Map.get({f, a}, []) |> Enum.uniq()
      assert found -- allowed == [], "#{f}/#{a} is also exported by #{inspect(found -- allowed)}"
    end
  end

  setup_all do
    {:ok, exporters: exporters()}
  end

  test "a forged calendar: or time zone database reaches only Calendar.ISO / the tz databases", %{exporters: e} do
    assert_only(e, Calendar.behaviour_info(:callbacks), [Calendar.ISO, Date])
    assert_only(e, Calendar.TimeZoneDatabase.behaviour_info(:callbacks), [Fieldline.TzDb, Calendar.UTCOnlyTimeZoneDatabase])
    # Sigils resolve a calendar by name at compile time.
    assert_only(e, [parse_date: 1, parse_time: 1, parse_naive_datetime: 1, parse_utc_datetime: 1], [Calendar.ISO])
  end

  test "Access on a forged struct reaches only container modules", %{exporters: e} do
    assert_only(e, [fetch: 2], [Access, Dict, Enum, HashDict, Keyword, Map, :dict, :orddict])
    # Agent.get_and_update(forged_map, ...) calls GenServer.call on the map: an exit, nothing else.
    assert_only(e, [get_and_update: 3], [Access, Agent, Dict, HashDict, Keyword, Map])
    assert_only(e, [pop: 2], [Access, Dict, HashDict, Keyword, Map])
  end

  test "sorter modules (Enum.sort/2, List.keysort/3) reach only compare/2 of date and version types", %{exporters: e} do
    assert_only(e, [compare: 2], [Date, DateTime, NaiveDateTime, Time, Version, Timex])
  end

  test "raise of a module and Exception.message reach only exceptions", %{exporters: e} do
    # Exception.message/1 is the dispatcher itself; :erl_posix_msg.message/1 formats an errno atom.
    for fun <- [exception: 1, message: 1], m <- Map.get(e, fun, []), m not in [Exception, :erl_posix_msg] do
      assert Code.ensure_loaded?(m) and function_exported?(m, :__struct__, 0) and Map.get(m.__struct__(), :__exception__) == true,
             "#{inspect(m)} exports #{inspect(fun)} but is not an exception"
    end
  end

  test "field access on a non-map calls a zero-arity function of that name: none is exported", %{exporters: e} do
    fields = [:calendar, :year, :month, :day, :hour, :minute, :second, :std_offset, :utc_offset, :source, :opts, :map,
              :first, :last, :term, :message, :limit, :pretty]
    assert_only(e, Enum.map(fields, &{&1, 0}), [])
  end
end

defmodule LanguageLayer.TailFrameTest do
  # The compiler wraps each function's last call in Fieldline.Runtime.returned/1 (so errors keep
  # their line); the wrapper is the runtime's, not the parser's: written by hand it is refused.
  use ExUnit.Case, async: true

  defp load(name, body),
    do: Fieldline.Compiler.load(name, "defmodule Parser do\n  use Platform.Parsing.Behaviour\n" <> body <> "\nend\n")

  test "a parser calling the tail wrapper by name is refused" do
    assert {:error, [{3, message}]} = load("tailname", "  def parse(_, _), do: Fieldline.Runtime.returned(%{a: 1})")
    assert message =~ "not available to parsers"
  end

  test "a parser reaching the tail wrapper through an alias is refused" do
    assert {:error, [{3, message} | _]} =
             load("tailalias", "  alias Fieldline.Runtime, as: R\n  def parse(_, _), do: R.returned(1)")

    assert message =~ "not available to parsers"
  end

  test "a parser capturing the tail wrapper is refused" do
    assert {:error, [{3, message}]} =
             load("tailcapture", "  def parse(_, _), do: Enum.map([1], &Fieldline.Runtime.returned/1)")

    assert message =~ "not available to parsers"
  end

  test "a local function named like the wrapper stays the parser's own and is still checked" do
    assert {:error, [{4, message}]} =
             load("taillocal", "  def parse(_, _), do: returned(1)\n  defp returned(x), do: :erlang.halt(x)")

    assert message =~ ":erlang.halt is not allowed"
  end
end
