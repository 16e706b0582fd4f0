defmodule Fieldline.TestVectors do
  @moduledoc """
  Runs a parser's own `tests/0` vectors (parser-contract.md): `{:parse_hex, hex, meta, expected}`
  (whitespace and mixed case allowed), `{:parse_json, json, meta, expected}`, `{:parse, term, meta,
  expected}`. Comparison is exact term equality of parse/2's return value. Warnings: the compiler's
  (`line N: ...`), and two community checks: fields/0 returns a list, and a catch-all clause answers
  `[]` for a non-binary, non-map.
  """

  def run(module, limits) do
    warnings = compile_warnings(module) ++ warnings(module, limits)

    case Fieldline.Runner.run(limits, fn -> {:ok, [], module.tests()} end) do
      {:ok, _, _logs, tests} when is_list(tests) ->
        %{vectors: Enum.with_index(tests, &vector(module, limits, &1, &2)), warnings: warnings}

      {:ok, _, _logs, other} ->
        %{vectors: [], warnings: ["tests/0 must return a list, got #{inspect(other, limit: 5)}" | warnings]}

      {:error, kind, message, _logs} ->
        %{vectors: [], warnings: ["tests/0 failed (#{kind}): #{message}" | warnings]}
    end
  end

  # What the compiler warned about (unused variables, a missing `use Platform.Parsing.Behaviour`).
  defp compile_warnings(module) do
    for {line, message} <- Fieldline.Compiler.warnings(module),
        do: if(line, do: "line #{line}: #{message}", else: message)
  end

  defp warnings(module, limits) do
    fields_warning =
      case Fieldline.Runner.run(limits, fn -> {:ok, [], module.fields()} end) do
        {:ok, _, _, fields} when is_list(fields) -> []
        {:ok, _, _, _} -> ["fields/0 should return a list"]
        {:error, kind, message, _} -> ["fields/0 failed (#{kind}): #{message}"]
      end

    catch_all =
      case Fieldline.Runner.parse(module, 42, %{}, limits, [], true) do
        {:ok, _, _, []} -> []
        _ -> ["parse/2 has no catch-all clause returning [] for unexpected payloads (tried parse(42, %{}))"]
      end

    fields_warning ++ catch_all
  end

  defp vector(module, limits, test, index) do
    case decode(test) do
      {:ok, kind, payload, meta, expected} ->
        label = if is_map(meta), do: Map.get(meta, :_comment), else: nil
        base = %{index: index, kind: kind, label: label && to_string(label), expected: show(expected)}

        case Fieldline.Runner.parse(module, payload, meta, limits, [], true) do
          {:ok, _, logs, ^expected} -> Map.merge(base, %{status: :pass, actual: show(expected), logs: logs})
          {:ok, _, logs, actual} -> Map.merge(base, %{status: :fail, actual: show(actual), logs: logs})
          {:error, kind, message, logs} -> Map.merge(base, %{status: :error, actual: "#{kind}: #{message}", logs: logs})
        end

      {:error, message} ->
        %{index: index, kind: :invalid, label: nil, status: :error, expected: "", actual: message, logs: []}
    end
  end

  defp decode({:parse_hex, hex, meta, expected}) when is_binary(hex) do
    case Base.decode16(String.replace(hex, ~r/\s+/, ""), case: :mixed) do
      {:ok, payload} -> {:ok, :parse_hex, payload, meta, expected}
      :error -> {:error, "invalid hex in :parse_hex vector"}
    end
  end

  defp decode({:parse_json, json, meta, expected}) when is_binary(json) do
    case Fieldline.Json.decode(json) do
      {:ok, payload} -> {:ok, :parse_json, payload, meta, expected}
      {:error, reason} -> {:error, "invalid JSON in :parse_json vector: #{reason}"}
    end
  end

  defp decode({:parse, payload, meta, expected}), do: {:ok, :parse, payload, meta, expected}
  defp decode(other), do: {:error, "unknown test vector #{inspect(other, limit: 4)}"}

  defp show(term), do: inspect(term, pretty: true, limit: :infinity, printable_limit: 4096, width: 80)
end
