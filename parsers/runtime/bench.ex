defmodule Fieldline.Bench do
  @moduledoc "The baseline of `fieldline bench parse`: a parser called in a compiled loop, nothing else."

  @doc "Microseconds for `n` calls of `module.parse(payload, meta)`, after 1000 warm-up calls."
  def loop_micros(module, payload, meta, n) do
    run(module, payload, meta, 1000)
    t0 = System.monotonic_time(:microsecond)
    run(module, payload, meta, n)
    System.monotonic_time(:microsecond) - t0
  end

  defp run(_module, _payload, _meta, 0), do: :ok

  defp run(module, payload, meta, n) do
    module.parse(payload, meta)
    run(module, payload, meta, n - 1)
  end
end

defmodule Fieldline.Bench.Runtime do
  @moduledoc "Second baseline: the worker's own per-batch work (meta, parse, normalise) in-process, no sandbox."

  @doc "Microseconds for `batches` parse requests of `packets` each, handled in this VM."
  def handle_micros(source, packets, batches) do
    request = {:parse, "bench-runtime", source, %{"timeout_ms" => 100, "heap_words" => 4_000_000}, [], packets, false, nil}
    emit = fn _frame -> :ok end
    Fieldline.Worker.handle(request, emit)
    t0 = System.monotonic_time(:microsecond)
    for _ <- 1..batches, do: Fieldline.Worker.handle(request, emit)
    System.monotonic_time(:microsecond) - t0
  end
end
