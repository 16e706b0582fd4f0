defmodule Fieldline.Runner do
  @moduledoc """
  Runs one `parse/2` call in its own process with a heap cap (`max_heap_size`, killed on overrun)
  and a deadline, then normalises the result there too, so a huge or slow result is bounded the
  same way. Outcomes: `{:ok, readings, logs}` or `{:error, kind, message, logs}` with kind one of
  `:parse_error`, `:timeout`, `:memory_limit`, `:crashed`.
  """

  @max_result_bytes 1_048_576

  # `keep_raw`: also return parse/2's own return value (test vectors compare it exactly).
  def parse(module, payload, meta, limits, last_readings, keep_raw \\ false) do
    run(limits, fn ->
      Process.put(:fieldline_last_readings, last_readings)

      case module.parse(payload, meta) do
        result ->
          case Fieldline.Normalize.readings(result) do
            {:ok, readings} ->
              if :erlang.external_size(readings) > @max_result_bytes,
                do: {:error, :parse_error, "readings of one packet exceed #{@max_result_bytes} bytes"},
                else: {:ok, readings, if(keep_raw, do: result, else: nil)}

            {:error, message} ->
              {:error, :parse_error, message}
          end
      end
    end)
  end

  @doc "Runs `fun` (returning `{:ok, readings, raw}` or `{:error, kind, message}`) under the limits."
  def run(%{timeout_ms: timeout, heap_words: heap}, fun) do
    parent = self()
    ref = make_ref()

    body = fn ->
      Fieldline.LogCapture.start_capture()

      outcome =
        try do
          fun.()
        rescue
          e -> {:error, :parse_error, Exception.message(e) <> where(__STACKTRACE__)}
        catch
          kind, reason -> {:error, :parse_error, "#{kind}: #{inspect(reason, limit: 10)}" <> where(__STACKTRACE__)}
        end

      send(parent, {ref, outcome, Fieldline.LogCapture.take()})
    end

    {pid, mref} =
      :erlang.spawn_opt(body, [:monitor, {:max_heap_size, %{size: heap, kill: true, error_logger: false}}])

    receive do
      {^ref, {:ok, readings, raw}, logs} ->
        Process.demonitor(mref, [:flush])
        {:ok, readings, logs, raw}

      {^ref, {:error, kind, message}, logs} ->
        Process.demonitor(mref, [:flush])
        {:error, kind, message, logs}

      {:DOWN, ^mref, :process, _, :killed} ->
        {:error, :memory_limit, "parse exceeded its heap limit of #{heap} words", []}

      {:DOWN, ^mref, :process, _, reason} ->
        {:error, :crashed, "parse process ended: #{inspect(reason, limit: 10)}", []}
    after
      timeout ->
        Process.exit(pid, :kill)
        Process.demonitor(mref, [:flush])
        flush(ref)
        {:error, :timeout, "parse took longer than #{timeout} ms", []}
    end
  end

  defp flush(ref) do
    receive do
      {^ref, _, _} -> :ok
    after
      0 -> :ok
    end
  end

  # " (parser.ex line N)" for the innermost frame in parser code.
  defp where(stacktrace) do
    Enum.find_value(stacktrace, "", fn
      {mod, _fun, _arity, info} ->
        if String.starts_with?(Atom.to_string(mod), "Elixir.FieldlineParsers.") and info[:line],
          do: " (parser line #{info[:line]})",
          else: nil

      _ ->
        nil
    end)
  end
end
