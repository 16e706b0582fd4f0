defmodule Fieldline.Frames do
  @moduledoc """
  The worker's pipes: `take/1` reads a request frame from fd 3, `send/1` writes an answer frame to
  fd 4 (each a 4-byte length, then the bytes), from the calling scheduler (sandbox/nif/frames.c says
  why not through a port). Loaded by the worker at boot, before the lockdown, from `../nif` beside
  this module's directory.
  """

  def load do
    path = :code.which(__MODULE__) |> to_string() |> Path.dirname() |> Path.join("../nif/fieldline_frames")
    :erlang.load_nif(String.to_charlist(path), 0)
  end

  @doc "Writes `frame` as one answer frame: `:ok` or `{:error, errno}`."
  def send(_frame), do: :erlang.nif_error(:not_loaded)

  @doc """
  The next request frame: `{:ok, bytes}`, `:idle` when none came while watching fd 3 for
  `watch_us` µs (at most 1000), `:eof` once the host closed it, or `{:error, errno}`.
  """
  def take(_watch_us), do: :erlang.nif_error(:not_loaded)

  @doc "Blocks (on a dirty I/O scheduler) until fd 3 has bytes or is closed; then `take/1` answers."
  def wait_readable, do: :erlang.nif_error(:not_loaded)

  @doc "The next request frame, however long it takes: `{:ok, bytes}`, `:eof` or `{:error, errno}`."
  def next_request(watch_us) do
    case take(watch_us) do
      :idle ->
        with :ok <- wait_readable(), do: next_request(watch_us)

      other ->
        other
    end
  end
end
