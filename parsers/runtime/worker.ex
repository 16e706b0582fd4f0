defmodule Fieldline.Worker do
  @moduledoc """
  The program inside each sandboxed BEAM. It reads requests from fd 3 and writes answers to fd 4
  (a pair of its own: stdout and stderr only reach the host's log ring, so nothing a parser prints
  can pose as a frame), each an Erlang term (term_to_binary) in a frame with a 4-byte big-endian
  length. Requests:

    {:ping}                                              -> {:pong, stats}
    {:check, source}                                     -> {:checked, :ok | {:error, [{line, msg}]}}
    {:parse, key, source, limits, last_readings, packets, announce, device}
        -> {:ready} once compiled (only when `announce`: the host then expects it), then
           {:outcomes, i, [outcome]} as packets finish (i: the first one's index; several when
           they finished together), the last one as {:outcomes, i, [outcome], stats};
           or, when the limits' budget_ms ran out, {:stopped, i, stats} (packets from i on not
           started)
         | {:rejected, [{line, msg}], stats}
    {:test, key, source, limits}                         -> {:tested, report, stats} | {:rejected, ...}

  Outcomes stream one frame per packet so that the host can hold each packet to its own deadline
  and, when it must stop the worker, knows which packet was running.

  Packets arrive as tuples `{id, device_id, payload_encoding, payload, meta, transceived_at (µs),
  packet_type}` (a tuple is cheaper than a map to encode and decode, on every packet), stored
  readings as maps with string keys (`data`, `measured_at`), `device` as nil or the device's JSON
  object (sent only to parsers that may preload it: `Fieldline.Preloads`). An outcome is `{:ok, readings, logs}`
  (readings as `Fieldline.Normalize` makes them: `{data, measured_at, location, fields}`) or
  `{:error, kind, message, logs}`. `stats` (`atoms`, `memory`) let the host recycle a worker whose
  atom table or memory grows.
  """

  @atoms_per_call 10_000

  # Started with `-s Elixir.Fieldline.Worker main`, which init calls in its own process during boot:
  # the loop runs elsewhere so that boot completes (anything that later waits on init would hang).
  def main do
    spawn(fn ->
      Fieldline.Warmup.load()
      configure_logging()
      Calendar.put_time_zone_database(Fieldline.TzDb)

      # Never serve without the post-boot lockdown (no exec, fork or new sockets).
      with :ok <- Fieldline.Frames.load(), :ok <- Fieldline.Lockdown.lock() do
        # Requests come in and answers go out through Fieldline.Frames.
        loop()
      else
        error ->
          IO.puts(:stderr, "fieldline worker: setup failed (answer channel or lockdown): #{inspect(error)}")
          :erlang.halt(3)
      end
    end)

    :ok
  end

  @doc false
  def configure_logging_for_test, do: configure_logging()

  defp configure_logging do
    # Nothing may print to stdout: it carries the protocol. Log events go only to the capture handler.
    Application.put_env(:logger, :backends, [])
    Application.put_env(:logger, :console, [])
    Application.put_env(:logger, :handle_otp_reports, false)
    Application.put_env(:logger, :handle_sasl_reports, false)
    {:ok, _} = Application.ensure_all_started(:logger)
    # Only our capture handler: Elixir's own handler forwards to a gen_event that the worker does not
    # need (and that blocked callers in this setup); the default handler would write to stdout.
    for id <- :logger.get_handler_ids(), do: :logger.remove_handler(id)
    :ok = :logger.add_handler(:fieldline_capture, Fieldline.LogCapture, %{level: :all})
    # Logger's macros read the primary level; Logger.configure would go through the removed handler.
    :logger.set_primary_config(:level, :all)
  end

  # How long the scheduler watches for the next request before it sleeps: the host sends it a few
  # tens of µs after the last answer when it has more work (sandbox/nif/frames.c).
  @watch_us 200

  defp loop do
    case Fieldline.Frames.next_request(@watch_us) do
      {:ok, frame} ->
        emit = fn term -> :ok = Fieldline.Frames.send(:erlang.term_to_binary(term)) end

        try do
          frame |> :erlang.binary_to_term([:safe]) |> handle(emit)
        rescue
          e -> emit.({:error, :protocol, Exception.message(e)})
        end

        loop()

      :eof ->
        :erlang.halt(0)

      {:error, errno} ->
        IO.puts(:stderr, "fieldline worker: reading a request failed (errno #{errno})")
        :erlang.halt(4)
    end
  end

  # What the host recycles a worker by. The atom count is cheap and sent every time; the memory total
  # costs ~15 µs (the VM sums every allocator), as much as parsing 100 small packets, so a parse call
  # carries it only every @memory_every calls and on calls that compiled (loaded code is, with atoms,
  # what stays in a worker; heaps and binaries of a call end with its batch process).
  @memory_every 16

  defp stats, do: %{atoms: :erlang.system_info(:atom_count), memory: :erlang.memory(:total)}

  defp parse_stats(compiled?) do
    calls = Process.get(:fieldline_parse_calls, 0) + 1
    Process.put(:fieldline_parse_calls, calls)

    if compiled? or rem(calls, @memory_every) == 0,
      do: stats(),
      else: %{atoms: :erlang.system_info(:atom_count)}
  end

  @doc "Answers one request through `emit` (called once per frame)."
  def handle({:ping}, emit), do: emit.({:pong, stats()})

  def handle({:check, source}, emit), do: emit.({:checked, Fieldline.Compiler.check(source)})

  def handle({:parse, key, source, limits, last_readings, packets, announce, device}, emit) do
    case Fieldline.Compiler.load(key, source) do
      {:ok, module} ->
        if announce, do: emit.({:ready})
        history = Enum.map(last_readings, &stored_reading/1)
        Process.put(:fieldline_atom_budget, @atoms_per_call)
        device = Fieldline.Preloads.device(device)
        inputs = Enum.map(packets, &parser_input(&1, device))
        total = length(inputs)

        finished =
          Fieldline.Runner.parse_batch(module, inputs, limits(limits), history, fn index, outcomes ->
            if index + length(outcomes) == total,
              do: emit.({:outcomes, index, outcomes, parse_stats(announce)}),
              else: emit.({:outcomes, index, outcomes})
          end)

        # The call's time budget ran out: packets from `index` on were not started.
        with {:stopped, index} <- finished, do: emit.({:stopped, index, parse_stats(announce)})

      {:error, problems} ->
        emit.({:rejected, problems, stats()})
    end
  end

  def handle({:test, key, source, limits}, emit) do
    case Fieldline.Compiler.load(key, source) do
      {:ok, module} -> emit.({:tested, Fieldline.TestVectors.run(module, limits(limits)), stats()})
      {:error, problems} -> emit.({:rejected, problems, stats()})
    end
  end

  def handle(other, emit), do: emit.({:error, :protocol, "unknown request #{inspect(other, limit: 3)}"})

  defp limits(%{"timeout_ms" => t, "heap_words" => h} = l) when is_integer(t) and is_integer(h),
    do: %{timeout_ms: t, heap_words: h, budget_ms: budget(Map.get(l, "budget_ms", 0))}

  defp limits(_), do: %{timeout_ms: 100, heap_words: 2_000_000, budget_ms: 0}

  defp budget(ms) when is_integer(ms) and ms > 0, do: ms
  defp budget(_), do: 0

  defp stored_reading(%{"data" => data, "measured_at" => us}),
    do: %{data: data, measured_at: DateTime.from_unix!(us, :microsecond)}

  @doc "The payload and meta a parser sees for a packet (parser-contract.md, The meta argument)."
  def parser_input({id, device_id, encoding, payload, packet_meta, transceived_at, packet_type}, device \\ nil)
      when is_integer(transceived_at) do
    meta = %{
      meta: atomize_keys(packet_meta || %{}),
      transceived_at: DateTime.from_unix!(transceived_at, :microsecond),
      payload_encoding: encoding,
      packet_type: packet_type,
      device_id: device_id,
      packet_id: id
    }

    {payload, if(device, do: Map.put(meta, :device, device), else: meta)}
  end

  # JSON object keys that look like identifiers become atoms (parsers write meta.meta.frame_port);
  # others stay strings. Atoms are never collected, so a call may create at most @atoms_per_call new
  # ones (keys past that stay strings) and the host recycles a worker whose atom count grows past
  # its bound, far below the VM's limit.
  @doc false
  def meta_key(k), do: atom_key(k)
  @doc false
  def meta_value(v), do: atomize_keys(v)

  defp atomize_keys(%{} = map) do
    Map.new(map, fn {k, v} -> {atom_key(k), atomize_keys(v)} end)
  end

  defp atomize_keys(list) when is_list(list), do: Enum.map(list, &atomize_keys/1)
  defp atomize_keys(other), do: other

  defp atom_key(<<c, rest::binary>> = k) when byte_size(k) <= 64 and (c in ?a..?z or c in ?A..?Z or c == ?_) do
    if identifier_tail?(rest), do: bounded_atom(k), else: k
  end

  defp atom_key(k), do: k

  defp bounded_atom(k) do
    String.to_existing_atom(k)
  rescue
    ArgumentError ->
      case Process.get(:fieldline_atom_budget, 0) do
        n when n > 0 ->
          Process.put(:fieldline_atom_budget, n - 1)
          String.to_atom(k)

        _ ->
          k
      end
  end

  defp identifier_tail?(<<>>), do: true

  defp identifier_tail?(<<c, rest::binary>>) when c in ?a..?z or c in ?A..?Z or c in ?0..?9 or c == ?_,
    do: identifier_tail?(rest)

  defp identifier_tail?(_), do: false
end
