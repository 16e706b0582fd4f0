# What `parser check` (and the check when a parser is stored) tells a parser author: what the
# compiler knows (unknown modules, undefined functions, warnings), each problem once, at the line of
# the call, and always about `Parser`, never the module the runtime renamed it to. ctest runs this
# with the built runtime and the consolidated protocols first in the code path, as workers have them.
ExUnit.start()
Calendar.put_time_zone_database(Fieldline.TzDb)

defmodule Diagnostics.Helpers do
  @limits %{timeout_ms: 2000, heap_words: 4_000_000, budget_ms: 0}
  def limits, do: @limits

  # Line 1 `defmodule Parser do`, line 2 the `use`, the body from line 3 on.
  def parser(body), do: "defmodule Parser do\n  use Platform.Parsing.Behaviour\n" <> body <> "\nend\n"

  def check(source), do: Fieldline.Compiler.check(source)

  # No message may name the renamed module.
  def internal_free?(messages), do: Enum.all?(messages, &(not String.contains?(&1, "FieldlineParsers")))
end

defmodule Diagnostics.CheckTest do
  use ExUnit.Case, async: false
  import Diagnostics.Helpers

  test "a typo in a module name says unknown module, once, at the line of the call" do
    source = """
    defmodule Parser do
      use Platform.Parsing.Behaviour
      def parse(p, _meta) do
        x = 1
        Strng.upcase(p)
      end
    end
    """

    assert {:error, [{5, message}]} = check(source)
    assert message =~ "unknown module Strng"
    assert message =~ "did you mean String?"
    refute message =~ "not allowed"
  end

  test "a module reference that is neither a call nor allowed: unknown when it does not exist" do
    assert {:error, [{3, "unknown module Nonexistent.Thing"}]} = check(parser("  def parse(_, _), do: Nonexistent.Thing"))
  end

  test "an undefined function of an allowed module says undefined, with the arity the call has" do
    assert {:error, [{3, message}]} = check(parser("  def parse(p, _), do: String.upcas(p)"))
    assert message == "undefined function String.upcas/1 (did you mean String.upcase/1?)"
    # Piped: the compiled arity.
    assert {:error, [{3, "undefined function String.upcas/2" <> _}]} =
             check(parser("  def parse(p, _), do: p |> String.upcas(:ascii)"))
  end

  test "an undefined function of a rewritten module is named as written (Regex, not the wrapper)" do
    assert {:error, [{3, message}]} = check(parser("  def parse(p, _), do: Regex.rn(~r/a/, p)"))
    assert message =~ "undefined function Regex.rn/2"
    refute message =~ "SafeRegex"
  end

  test "an undefined function of a partly allowed module says undefined; a real one stays not allowed" do
    assert {:error, [{3, "undefined function Logger.wrn" <> _}]} = check(parser("  def parse(_, _), do: Logger.wrn(\"x\")"))
    assert {:error, [{3, "call to :lists.keysort is not allowed"}]} = check(parser("  def parse(l, _), do: :lists.keysort(1, l)"))
  end

  test "a forbidden module that exists still says not allowed" do
    assert {:error, [{3, "call to File.read is not allowed: module File is not available to parsers"}]} =
             check(parser("  def parse(p, _), do: File.read(p)"))

    assert {:error, [{3, "call to :os.cmd is not allowed: module :os is not available to parsers"}]} =
             check(parser("  def parse(_, _), do: :os.cmd(~c\"id\")"))

    assert {:error, [{3, "module File is not allowed"}]} = check(parser("  def parse(_, _), do: File"))
  end

  test "a missing use Platform.Parsing.Behaviour is a warning at the defmodule line" do
    assert {:ok, [{1, warning}]} = check("defmodule Parser do\n  def parse(_, _), do: []\nend\n")
    assert warning =~ "use Platform.Parsing.Behaviour"
  end

  test "calling get/2 without the use is an error that says where get/2 comes from" do
    assert {:error, [{3, message}]} = check("defmodule Parser do\n  def parse(p, _),\n    do: get(p, [:a])\nend\n")
    assert message =~ "undefined function get/2"
    assert message =~ "use Platform.Parsing.Behaviour"
    refute message =~ "parser.ex"
    assert internal_free?([message])
  end

  test "an unused variable is a warning at its line, and the parser passes" do
    assert {:ok, [{4, warning}]} = check(parser("  def parse(p, _meta) do\n    x = 1\n    String.upcase(p)\n  end"))
    assert warning =~ ~s(variable "x" is unused)
  end

  test "a clean parser has neither problems nor warnings" do
    assert {:ok, []} = check(parser("  def parse(p, _), do: %{v: p}"))
  end

  test "one message per problem" do
    # A call through an alias of a forbidden module: the call, not also the module reference.
    source = parser("  alias File, as: Storage\n  def parse(p, _) do\n    Storage.write(\"/tmp/x\", p)\n  end")
    assert {:error, problems} = check(source)
    assert [{3, "alias of File" <> _}, {5, "call to File.write is not allowed" <> _}] = problems

    # Kernel.send: the remote call, not also the local `send/2`.
    assert {:error, [{3, "call to Kernel.send is not allowed"}]} = check(parser("  def parse(p, _), do: Kernel.send(p, 1)"))

    # use of a forbidden module: the `use`, not also the module reference.
    assert {:error, [{3, "use of GenServer is not allowed"}]} = check(parser("  use GenServer\n  def parse(_, _), do: []"))

    # Two calls on two lines are two problems.
    assert {:error, [{4, _}, {5, _}]} = check(parser("  def parse(p, _) do\n    Strng.upcase(p)\n    Strng.downcase(p)\n  end"))
  end

  test "no message of the check names the renamed module" do
    sources = [
      parser("  def parse(_, _), do: nope()"),
      parser("  def parse(_, _), do: __MODULE__.nope(1) + Parser.x()"),
      parser("  def parse(p, _), do: String.upcas(p)"),
      parser("  def parse(p, _meta) do\n    x = __MODULE__\n    p\n  end"),
      parser("  def parse(_, _), do: %Parser{}")
    ]

    for source <- sources do
      messages =
        case check(source) do
          {:ok, warnings} -> Enum.map(warnings, &elem(&1, 1))
          {:error, problems} -> Enum.map(problems, &elem(&1, 1))
        end

      assert internal_free?(messages), inspect(messages)
    end

    assert {:error, [{3, message}]} = check(parser("  def parse(_, _), do: nope()"))
    assert message =~ "undefined function nope/0"
    assert message =~ "Parser"
  end
end

defmodule Diagnostics.RuntimeTest do
  use ExUnit.Case, async: false
  import Diagnostics.Helpers

  @source """
  defmodule Parser do
    use Platform.Parsing.Behaviour
    def parse(<<1>>, _), do: %{v: __MODULE__.nope()}
    def parse(<<2>>, _), do: %{v: String.upcase(42)}
    def parse(<<3>>, _), do: []
    def parse(x, _) when is_binary(x), do: %{v: x.field}
    def tests, do: [{:parse_hex, "01", %{}, []}, {:parse_hex, "02", %{}, []}]
  end
  """

  setup_all do
    {:ok, module} = Fieldline.Compiler.load("diagruntime", @source)
    %{module: module}
  end

  test "runtime errors name Parser and the line of the call (replay path)", %{module: module} do
    inputs = [{<<1>>, %{}}, {<<2>>, %{}}, {<<4>>, %{}}, {%{}, %{}}]
    me = self()
    :ok = Fieldline.Runner.parse_batch(module, inputs, limits(), [], fn i, outcomes -> send(me, {:outcomes, i, outcomes}) end)
    outcomes = collect(length(inputs), [])

    assert [{:error, :parse_error, undefined, _}, {:error, :parse_error, bad_arg, _}, {:error, :parse_error, field, _},
            {:error, :parse_error, clause, _}] = outcomes

    assert undefined =~ "Parser.nope/0 is undefined"
    assert undefined =~ "(parser line 3)"
    assert bad_arg =~ "(parser line 4)"
    assert field =~ "(parser line 6)"
    assert clause =~ "no function clause matching in Parser.parse/2"
    assert internal_free?([undefined, bad_arg, field, clause])
  end

  test "runtime errors name Parser in test vectors too (test path)", %{module: module} do
    %{vectors: vectors, warnings: warnings} = Fieldline.TestVectors.run(module, limits())
    assert [%{status: :error, actual: first}, %{status: :error, actual: second}] = vectors
    assert first =~ "Parser.nope/0 is undefined"
    assert first =~ "(parser line 3)"
    assert second =~ "(parser line 4)"
    assert internal_free?([first, second | warnings])
    # parse(42, %{}) has no clause: the community warning, named with Parser.
    assert Enum.any?(warnings, &(&1 =~ "catch-all"))
  end

  test "an error raised by a call in tail position still names its line" do
    source = """
    defmodule Parser do
      use Platform.Parsing.Behaviour
      def parse(<<1>>, _) do
        text = "not a number"
        String.to_integer(text)
      end
      def parse(<<2>>, _), do: "x" |> String.to_integer()
      def parse(<<3, x::binary>>, _), do: if(x != "", do: String.to_integer(x), else: nil)
      def parse(<<4>>, _), do: count(3_000_000, 0)
      defp count(0, acc), do: %{n: acc}
      defp count(n, acc), do: count(n - 1, acc + 1)
    end
    """

    {:ok, module} = Fieldline.Compiler.load("diagtail", source)
    inputs = [{<<1>>, %{}}, {<<2>>, %{}}, {<<3, "z">>, %{}}, {<<4>>, %{}}]
    me = self()
    :ok = Fieldline.Runner.parse_batch(module, inputs, limits(), [], fn i, outcomes -> send(me, {:outcomes, i, outcomes}) end)

    assert [{:error, :parse_error, block, _}, {:error, :parse_error, pipe, _}, {:error, :parse_error, branch, _}, counted] =
             collect(length(inputs), [])

    assert block =~ "(parser line 5)"
    assert pipe =~ "(parser line 7)"
    assert branch =~ "(parser line 8)"
    # The module's own calls stay tail calls: three million rounds in constant stack.
    assert {:ok, [{%{"n" => 3_000_000}, nil, nil, nil}], []} = counted
  end

  test "compile warnings of a loaded parser are test warnings" do
    {:ok, module} = Fieldline.Compiler.load("diagwarn", "defmodule Parser do\n  def parse(p, _) do\n    x = 1\n    p\n  end\nend\n")
    assert [{1, use_warning}, {3, unused}] = Fieldline.Compiler.warnings(module)
    assert use_warning =~ "use Platform.Parsing.Behaviour"
    assert unused =~ ~s(variable "x" is unused)
    %{warnings: warnings} = Fieldline.TestVectors.run(module, limits())
    assert Enum.any?(warnings, &String.starts_with?(&1, "line 3: variable \"x\" is unused"))
  end

  defp collect(0, acc), do: acc

  defp collect(n, acc) do
    receive do
      {:outcomes, _i, outcomes} -> collect(n - length(outcomes), acc ++ outcomes)
    after
      10_000 -> flunk("outcomes missing after #{inspect(acc)}")
    end
  end
end
