defmodule Fieldline.Warmup do
  @moduledoc """
  Loads, at worker boot, the modules the first compile and parse would load one by one.

  A fresh worker spent ~200 ms in its first compile, most of it loading ~130 modules of Elixir's
  and Erlang's compilers, each on first call: a code-server round trip, a search of the code path
  and a commit of the export table per module. `:code.ensure_modules_loaded/1` loads the same list
  with one commit, ~40% less work, and the first compile then takes as long as any other
  (`fieldline parser test` and every server worker's first parse pay this once per worker).

  The list is recorded by the build (`record/0` in a VM booted as a worker is, compiling and testing
  the bundled parsers) into `../warm/modules.eterm` beside this module's directory. It only names
  modules: a module that is not on the worker's code path is skipped, a missing list loads nothing.
  """

  @doc "Loads the recorded modules; returns how many of them are loaded afterwards."
  def load do
    case :file.consult(list_path()) do
      {:ok, [modules]} when is_list(modules) ->
        _ = :code.ensure_modules_loaded(Enum.filter(modules, &is_atom/1))
        Enum.count(modules, &:erlang.module_loaded/1)

      _ ->
        0
    end
  end

  @doc """
  Build time: `erl -boot no_dot_erlang -noshell -pa <paths> -s Elixir.Fieldline.Warmup record
  -extra <out> <parser.ex>...` writes the modules loaded after compiling and testing the parsers
  (parsers' own modules left out) to `<out>`, then halts with 0, or 1 if a parser failed to compile.
  """
  def record do
    [out | files] = Enum.map(:init.get_plain_arguments(), &List.to_string/1)
    Fieldline.Worker.configure_logging_for_test()
    Calendar.put_time_zone_database(Fieldline.TzDb)
    limits = %{timeout_ms: 1000, heap_words: 2_000_000, budget_ms: 0}

    compiled =
      for file <- files do
        source = File.read!(file)
        key = Base.encode16(:erlang.md5(source))

        case Fieldline.Compiler.load(key, source) do
          {:ok, module} ->
            Fieldline.TestVectors.run(module, limits)
            true

          {:error, problems} ->
            IO.puts(:stderr, "#{file}: #{inspect(problems)}")
            false
        end
      end

    modules =
      for {module, _} <- :code.all_loaded(),
          not String.starts_with?(Atom.to_string(module), "Elixir.FieldlineParsers."),
          do: module

    File.write!(out, :io_lib.format(~c"~p.~n", [Enum.sort(modules)]))
    :erlang.halt(if Enum.all?(compiled), do: 0, else: 1)
  end

  defp list_path do
    :code.which(__MODULE__) |> to_string() |> Path.dirname() |> Path.join("../warm/modules.eterm")
  end
end
