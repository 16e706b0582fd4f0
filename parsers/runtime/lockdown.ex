defmodule Fieldline.Lockdown do
  @moduledoc """
  The worker's last setup step, after boot and before serving: adds a seccomp filter refusing exec,
  fork and new sockets (sandbox/nif/lockdown.c, loaded from `../nif` beside this module's directory,
  as both are laid out in the build and in the worker's root).
  """

  def lock do
    path = :code.which(__MODULE__) |> to_string() |> Path.dirname() |> Path.join("../nif/fieldline_lockdown")

    case :erlang.load_nif(String.to_charlist(path), 0) do
      :ok -> lock_nif()
      {:error, reason} -> {:error, {:load_nif, reason}}
    end
  end

  @doc false
  def lock_nif, do: :erlang.nif_error(:not_loaded)
end
