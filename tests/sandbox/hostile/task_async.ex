defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(payload, _meta) do
    task = Task.async(fn -> byte_size(payload) end)
    %{size: Task.await(task)}
  end
end
