#!/usr/bin/env bash
# Runs the ```sh blocks of docs/QUICKSTART.md, in order, in one shell, against a real `fieldline serve`
# on 127.0.0.1 and a free port, so the quickstart cannot rot. Fails when any command fails, and every
# curl fails on an HTTP error (the blocks' curl runs with --fail-with-body). Blocks fenced otherwise
# (```console, ```text) are shown to the reader but not run.
#   quickstart_test.sh FIELDLINE_BINARY QUICKSTART.md
set -euo pipefail
binary=$(realpath "$1")
doc=$(realpath "$2")

for tool in curl jq; do
  command -v "$tool" > /dev/null || { echo "SKIP: $tool is not installed (scripts/deps installs it)"; exit 77; }
done

work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The server announces "fieldline listening on http://127.0.0.1:PORT ..." as its first line.
mkfifo "$work/announce"
"$binary" serve --data "$work/data" --listen 127.0.0.1:0 > "$work/announce" 2> "$work/serve.log" &
server=$!
exec 3< "$work/announce"
read -r announced <&3 || true
cat <&3 > /dev/null &  # keep draining its stdout
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' <<< "$announced") || {
  echo "the server did not announce its address: '$announced'"
  cat "$work/serve.log"
  exit 1
}

# The reader's working directory is the repository root after scripts/run: ./data and build/api/fieldline.
mkdir -p "$work/repo/build/api"
ln -s "$binary" "$work/repo/build/api/fieldline"
ln -s "$work/data" "$work/repo/data"

# The blocks, each announced with its line in the document; scripts/run's address becomes this server's.
{
  echo 'set -euo pipefail'
  echo 'curl() { command curl --fail-with-body --show-error "$@"; }'
  awk -v doc="$doc" '
    /^```sh[[:space:]]*$/ { inside = 1; printf "echo \"--- %s:%d\"\n", doc, NR; next }
    /^```/ { inside = 0; next }
    inside { print }
  ' "$doc" | sed "s#http://127\.0\.0\.1:8080#$url#g"
} > "$work/quickstart.sh"
blocks=$(grep -c '^```sh' "$doc")
[ "$blocks" -gt 10 ] || { echo "only $blocks sh blocks in $doc"; exit 1; }

cd "$work/repo"
if bash "$work/quickstart.sh"; then
  echo "quickstart: $blocks blocks ran against $url"
else
  status=$?
  echo "quickstart failed (exit $status); the last '---' line names the block. Server log:"
  tail -n 20 "$work/serve.log"
  exit "$status"
fi
