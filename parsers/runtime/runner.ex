defmodule Fieldline.Runner do
  @moduledoc """
  Runs one `parse/2` call in its own process with a heap cap (`max_heap_size`, killed on overrun)
  and a deadline, then normalises the result there too, so a huge or slow result is bounded the
  same way. Outcomes: `{:ok, readings, logs}` or `{:error, kind, message, logs}` with kind one of
  `:parse_error`, `:timeout`, `:memory_limit`, `:crashed`.
  """

  @max_result_bytes 1_048_576

  @doc """
  Parses a batch in one process (spawning one per packet costs ~9 µs, the parse itself ~1 µs).
  Outcomes are handed to `emit.(index, [outcome, ...])` as soon as they are known, in order (those
  that finished while this process waited its turn go together, none is held back), and the
  per-packet deadline restarts with each one, so semantics stay per packet: when the batch process
  overruns or is killed, the packet in progress gets `:timeout` / `:memory_limit` / `:crashed` and a
  fresh process continues with the next packet. (The host enforces the same deadline from outside,
  with a grace period, in case this process never gets to run.)
  `inputs` are `{payload, meta}`; `history` is the newest-first list for get_last_reading/2.

  With a `budget_ms` in `limits`, no packet but the first is started once the call has run that
  long: the result is then `{:stopped, index}` (packets from `index` on were not parsed; the host
  queues them again), so a call holds its parse thread for about the budget plus one deadline.
  Otherwise `:ok`.
  """
  def parse_batch(module, inputs, limits, history, emit) do
    budget = Map.get(limits, :budget_ms, 0)
    stop_at = if budget > 0, do: System.monotonic_time(:millisecond) + budget, else: :never
    batch(module, inputs, Map.put(limits, :stop_at, stop_at), history, 0, emit)
  end

  defp batch(_module, [], _limits, _history, _index, _emit), do: :ok

  defp batch(module, inputs, %{timeout_ms: timeout, heap_words: heap} = limits, history, index, emit) do
    parent = self()
    ref = make_ref()
    stop_at = limits.stop_at
    body = fn -> batch_body(parent, ref, module, inputs, history, stop_at, index > 0) end

    {pid, mref} =
      :erlang.spawn_opt(body, [:monitor, {:max_heap_size, %{size: heap, kill: true, error_logger: false}}])

    collect(module, inputs, limits, history, index, emit, {pid, mref, ref, timeout, heap})
  end

  defp collect(module, [{_payload, meta} | rest] = inputs, limits, history, index, emit, run) do
    {pid, mref, ref, timeout, heap} = run

    receive do
      {^ref, outcome} ->
        {done, left, history} = drain(ref, rest, remember(history, outcome, meta), [outcome])
        emit.(index, done)
        collect(module, left, limits, history, index + length(done), emit, run)

      {^ref, :stopped, :budget} ->
        Process.demonitor(mref, [:flush])
        {:stopped, index}

      {:DOWN, ^mref, :process, _, :normal} ->
        # Finished; any outcome still in the mailbox was received above (messages stay ordered).
        batch(module, inputs, limits, history, index, emit)

      {:DOWN, ^mref, :process, _, :killed} ->
        emit.(index, [{:error, :memory_limit, "parse exceeded its heap limit of #{heap} words", []}])
        batch(module, rest, limits, history, index + 1, emit)

      {:DOWN, ^mref, :process, _, reason} ->
        emit.(index, [{:error, :crashed, Fieldline.Compiler.public("parse process ended: #{inspect(reason, limit: 10)}"), []}])
        batch(module, rest, limits, history, index + 1, emit)
    after
      timeout ->
        Process.exit(pid, :kill)
        Process.demonitor(mref, [:flush])
        flush_batch(ref)
        emit.(index, [{:error, :timeout, "parse took longer than #{timeout} ms", []}])
        batch(module, rest, limits, history, index + 1, emit)
    end
  end

  defp collect(_module, [], _limits, _history, _index, _emit, {_pid, mref, ref, _, _}) do
    Process.demonitor(mref, [:flush])
    flush_batch(ref)
    :ok
  end

  # The outcomes already waiting in the mailbox, without waiting for any.
  defp drain(ref, [{_payload, meta} | rest] = inputs, history, acc) do
    receive do
      {^ref, outcome} -> drain(ref, rest, remember(history, outcome, meta), [outcome | acc])
    after
      0 -> {Enum.reverse(acc), inputs, history}
    end
  end

  defp drain(_ref, [], history, acc), do: {Enum.reverse(acc), [], history}

  defp flush_batch(ref) do
    receive do
      {^ref, _} -> flush_batch(ref)
    after
      0 -> :ok
    end
  end

  defp batch_body(parent, ref, module, inputs, history, stop_at, may_stop_first) do
    inputs
    |> Enum.with_index()
    |> Enum.reduce_while(history, fn {input, position}, hist ->
      if (position > 0 or may_stop_first) and stop_at != :never and System.monotonic_time(:millisecond) >= stop_at do
        send(parent, {ref, :stopped, :budget})
        {:halt, hist}
      else
        {:cont, parse_one(parent, ref, module, input, hist)}
      end
    end)
  end

  defp parse_one(parent, ref, module, {payload, meta}, hist) do
    Fieldline.LogCapture.start_capture()
    Process.put(:fieldline_last_readings, hist)

    outcome =
      try do
        case Fieldline.Normalize.readings(module.parse(payload, Fieldline.Preloads.for_parser(module, meta))) do
          {:ok, readings} ->
            if :erlang.external_size(readings) > @max_result_bytes,
              do: {:error, :parse_error, "readings of one packet exceed #{@max_result_bytes} bytes"},
              else: {:ok, readings}

          {:error, message} ->
            {:error, :parse_error, message}
        end
      rescue
        e -> {:error, :parse_error, bounded(Exception.message(e)) <> where(__STACKTRACE__)}
      catch
        kind, reason -> {:error, :parse_error, bounded("#{kind}: #{inspect(reason, limit: 10)}") <> where(__STACKTRACE__)}
      end

    logs = Fieldline.LogCapture.take()

    outcome =
      case outcome do
        {:ok, readings} -> {:ok, readings, logs}
        # The parser's module is `Parser` to its author, whatever the runtime renamed it to.
        {:error, kind, message} -> {:error, kind, message |> String.replace(inspect(module), "Parser") |> Fieldline.Compiler.public(), logs}
      end

    send(parent, {ref, outcome})
    remember(hist, outcome, meta)
  end

  @doc "History for get_last_reading/2 after a packet: its readings first (newest), at most 50."
  def remember(history, {:ok, readings, _logs}, meta) when readings != [] do
    produced =
      readings
      |> Enum.map(fn {data, measured_at, _location, _fields} -> %{data: data, measured_at: measured_at(measured_at, meta)} end)
      |> Enum.reverse()

    Enum.take(produced ++ history, 50)
  end

  def remember(history, _outcome, _meta), do: history

  defp measured_at(us, _meta) when is_integer(us), do: DateTime.from_unix!(us, :microsecond)
  defp measured_at(_, %{transceived_at: t}), do: t
  defp measured_at(_, _), do: nil

  # `keep_raw`: return parse/2's own return value instead of readings (test vectors compare it
  # exactly, as the platform's harness does: the storage checks and JSON conversion are not part of
  # a vector, so a value that could not be stored still compares).
  def parse(module, payload, meta, limits, last_readings, keep_raw \\ false) do
    run(limits, fn ->
      Process.put(:fieldline_last_readings, last_readings)

      case module.parse(payload, meta) do
        result when keep_raw ->
          if :erlang.external_size(result) > @max_result_bytes,
            do: {:error, :parse_error, "the return value exceeds #{@max_result_bytes} bytes"},
            else: {:ok, [], result}

        result ->
          case Fieldline.Normalize.readings(result) do
            {:ok, readings} ->
              if :erlang.external_size(readings) > @max_result_bytes,
                do: {:error, :parse_error, "readings of one packet exceed #{@max_result_bytes} bytes"},
                else: {:ok, readings, nil}

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
          e -> {:error, :parse_error, bounded(Exception.message(e)) <> where(__STACKTRACE__)}
        catch
          kind, reason -> {:error, :parse_error, bounded("#{kind}: #{inspect(reason, limit: 10)}") <> where(__STACKTRACE__)}
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
        # The parser's module is `Parser` to its author, whatever the runtime renamed it to.
        {:error, kind, Fieldline.Compiler.public(message), logs}

      {:DOWN, ^mref, :process, _, :killed} ->
        {:error, :memory_limit, "parse exceeded its heap limit of #{heap} words", []}

      {:DOWN, ^mref, :process, _, reason} ->
        {:error, :crashed, Fieldline.Compiler.public("parse process ended: #{inspect(reason, limit: 10)}"), []}
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

  @max_message_bytes 4096

  @doc "A parser's error message as stored: at most #{@max_message_bytes} bytes (a raise can carry any size)."
  def bounded(message) when is_binary(message) and byte_size(message) <= @max_message_bytes, do: message

  def bounded(message) when is_binary(message) do
    cut = whole_characters(binary_part(message, 0, @max_message_bytes), 3)
    cut <> " ... (#{byte_size(message) - byte_size(cut)} more bytes cut)"
  end

  def bounded(other), do: bounded(inspect(other, limit: 10))

  # Drops at most `tries` trailing bytes of a character the cut split.
  defp whole_characters(bin, 0), do: bin

  defp whole_characters(bin, tries) do
    if String.valid?(bin) or bin == "",
      do: bin,
      else: whole_characters(binary_part(bin, 0, byte_size(bin) - 1), tries - 1)
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
