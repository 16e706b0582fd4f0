# The language layer on its own (ctest runs this with the built runtime and the consolidated
# protocols first in the code path, as workers have them): the AST check's handling of aliases and
# directives, protocol dispatch, and an audit of every dispatch by name that the allowed modules do.
ExUnit.start()
Calendar.put_time_zone_database(Fieldline.TzDb)

defmodule LanguageLayer.Helpers do
  def ast_check(body) do
    {:ok, {:defmodule, meta, args}} = Code.string_to_quoted("defmodule Parser do\n" <> body <> "\nend", columns: false)
    Fieldline.AllowList.check({:defmodule, Keyword.put(meta, :fieldline_top, true), args})
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
