#!/usr/bin/env bash
# An interrupted benchmark (Ctrl-C: SIGINT to its process group) removes its scratch directories
# (the server's data directory with the seeded readings, nginx's) and ends as SIGINT would.
# Usage: bench_interrupt_test.sh <fieldline binary>
set -um  # job control: the benchmark gets its own process group and keeps SIGINT, as in a terminal
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$tmp.log"' EXIT
# TMPDIR keeps its directories apart.
TMPDIR=$tmp "$bin" bench query --seconds 30 --stream-readings 20000 > "$tmp.log" 2>&1 &
pid=$!
# Interrupted while the server holds an open RocksDB in its scratch directory.
for _ in $(seq 600); do
  compgen -G "$tmp/fieldline-bench-*/data/CURRENT" > /dev/null && break
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.05
done
if ! compgen -G "$tmp/fieldline-bench-*/data/CURRENT" > /dev/null; then
  echo "no server data directory appeared"; cat "$tmp.log"; kill -KILL -- "-$pid" 2> /dev/null; exit 1
fi
kill -INT -- "-$pid"
wait "$pid"
status=$?
rm -f "$tmp.log"
left=$(ls -A "$tmp")
echo "exit status $status; left behind: [${left}]"
[ "$status" -eq 130 ] && [ -z "$left" ]
