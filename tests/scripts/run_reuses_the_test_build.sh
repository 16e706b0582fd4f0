#!/usr/bin/env bash
# scripts/run after scripts/test must not rebuild: both configure ./build through scripts/build, and
# a difference in what they pass (warnings as errors, build type, a sanitizer) would change every
# compile command. This configures ./build the way scripts/run does and compares the compile commands.
# Usage: run_reuses_the_test_build.sh SOURCE_DIR BINARY_DIR. Skips (77) unless BINARY_DIR is
# SOURCE_DIR/build, the directory both scripts use (the sanitizer runs build elsewhere).
set -euo pipefail
src="$1" bin="$2"
if [ "$(realpath "$bin")" != "$(realpath "$src/build")" ]; then
  echo "skipped: this suite was built in $bin, not in ./build"
  exit 77
fi
cd "$src"
# The compile commands of the build scripts/test made (ninja rebuilds whatever's command changes).
before="$(mktemp)"
trap 'rm -f "$before"' EXIT
cp build/compile_commands.json "$before"
# The environment scripts/run gives scripts/build: none of the FIELDLINE_* settings.
env -u FIELDLINE_WERROR -u FIELDLINE_SANITIZE -u FIELDLINE_BUILD_DIR -u FIELDLINE_BUILD_TYPE \
  scripts/build --configure-only
if ! cmp -s "$before" build/compile_commands.json; then
  changed="$(diff "$before" build/compile_commands.json | grep -c '^>' || true)"
  echo "scripts/run configures ./build differently from scripts/test: $changed compile commands change, so"
  echo "everything they compile would be rebuilt. First difference:"
  diff "$before" build/compile_commands.json | head -4
  exit 1
fi
echo "scripts/run reuses the test build: every compile command is the same"
