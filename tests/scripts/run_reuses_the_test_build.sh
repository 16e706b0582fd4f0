#!/usr/bin/env bash
# scripts/run after scripts/test must not rebuild: both configure ./build through scripts/build, and
# a difference in what they pass (warnings as errors, build type, a sanitizer) would change every
# compile command. This configures ./build the way scripts/run does and asks ninja what it would do.
# Usage: run_reuses_the_test_build.sh SOURCE_DIR BINARY_DIR. Skips (77) unless BINARY_DIR is
# SOURCE_DIR/build, the directory both scripts use (the sanitizer runs build elsewhere).
set -euo pipefail
src="$1" bin="$2"
if [ "$(realpath "$bin")" != "$(realpath "$src/build")" ]; then
  echo "skipped: this suite was built in $bin, not in ./build"
  exit 77
fi
cd "$src"
# The environment scripts/run gives scripts/build: none of the FIELDLINE_* settings.
env -u FIELDLINE_WERROR -u FIELDLINE_SANITIZE -u FIELDLINE_BUILD_DIR -u FIELDLINE_BUILD_TYPE \
  scripts/build --configure-only
plan="$(ninja -C build -n -d explain 2>&1 | grep -v 'globbed directories' || true)"
steps="$(printf '%s\n' "$plan" | grep -cE '^\[[0-9]+/[0-9]+\] ' || true)"
if [ "$steps" -gt 0 ]; then
  echo "scripts/run would rebuild $steps steps after scripts/test; first reasons:"
  printf '%s\n' "$plan" | grep 'ninja explain' | head -5
  exit 1
fi
echo "scripts/run reuses the test build: nothing to rebuild"
