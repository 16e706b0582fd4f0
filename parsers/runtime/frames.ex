defmodule Fieldline.Frames do
  @moduledoc """
  The worker's answer channel: `send/1` writes one frame (4-byte length, then the bytes) to fd 4
  from the calling scheduler (sandbox/nif/frames.c says why not through the port). Loaded by the
  worker at boot, before the lockdown, from `../nif` beside this module's directory.
  """

  def load do
    path = :code.which(__MODULE__) |> to_string() |> Path.dirname() |> Path.join("../nif/fieldline_frames")
    :erlang.load_nif(String.to_charlist(path), 0)
  end

  @doc "Writes `frame` as one answer frame: `:ok` or `{:error, errno}`."
  def send(_frame), do: :erlang.nif_error(:not_loaded)
end
