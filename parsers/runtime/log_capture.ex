defmodule Fieldline.LogCapture do
  @moduledoc """
  An OTP :logger handler that keeps a parse's log lines for the parser author. Handlers run in the
  process that logs, so lines land in that parse process's dictionary and travel back with its
  result. Bounded: at most @max_lines lines of at most @max_line_bytes bytes; the rest are counted.
  Nothing reaches the worker's stdout, which carries the protocol.
  """

  @max_lines 100
  @max_line_bytes 2000

  def start_capture, do: Process.put(:fieldline_logs, {0, []})

  @doc "The captured lines, oldest first, with a note when lines were dropped."
  def take do
    case Process.get(:fieldline_logs) do
      {count, lines} when count > @max_lines ->
        Enum.reverse(lines) ++ ["[fieldline] #{count - @max_lines} more log lines dropped"]

      {_count, lines} ->
        Enum.reverse(lines)

      nil ->
        []
    end
  end

  # :logger handler callbacks
  def adding_handler(config), do: {:ok, config}
  def removing_handler(_config), do: :ok
  def changing_config(_mode, _old, new), do: {:ok, new}

  def log(%{level: level, msg: msg}, _config) do
    case Process.get(:fieldline_logs) do
      {count, lines} when count < @max_lines ->
        Process.put(:fieldline_logs, {count + 1, [format(level, msg) | lines]})

      {count, lines} ->
        Process.put(:fieldline_logs, {count + 1, lines})

      nil ->
        :ok
    end
  end

  defp format(level, msg) do
    text =
      try do
        case msg do
          {:string, chardata} -> IO.chardata_to_string(chardata)
          {:report, report} -> inspect(report, limit: 20)
          {format, args} -> IO.chardata_to_string(:io_lib.format(format, args))
        end
      rescue
        _ -> "(unprintable log message)"
      end

    line = "[#{level}] " <> text
    if byte_size(line) > @max_line_bytes, do: binary_part(line, 0, @max_line_bytes) <> "…", else: line
  end
end
