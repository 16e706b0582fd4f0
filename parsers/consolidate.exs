# Consolidates the protocols parser code dispatches through with only the implementations the
# sandbox allows (Fieldline.AllowList.protocol_impls/0), into the directory given as argument.
# Run by the build after the runtime: elixir -pa <runtime ebin> parsers/consolidate.exs <dir>.
# Debian's Elixir ships its protocols unconsolidated (impl_for/1 then looks up `Enumerable.<Name>`
# on the code path for any struct name, so a forged %{__struct__: File.Stream} reads files); the
# worker puts <dir> first in its code path and Fieldline.Compiler refuses to compile otherwise.
[out] = System.argv()
File.rm_rf!(out)
File.mkdir_p!(out)

for {protocol, impls} <- Fieldline.AllowList.protocol_impls() do
  {:ok, binary} = Protocol.consolidate(protocol, impls)
  File.write!(Path.join(out, "#{protocol}.beam"), binary)
end
