#!/usr/bin/env bash
# The whole test suite, as README.md gives it and .ci/run runs it. Every suite runs even when an earlier one
# fails (a Go failure must not hide the interop results), and the script exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
run() {
  local name=$1; shift
  echo "=== $name: $*"
  if ! "$@"; then failed+=("$name"); fi
}

# No test may read outside the repository (a fresh clone has nothing beside it).
standalone() {
  local hits
  hits=$(git grep -n -e '\.\./shared' -e '/work/shared' -- '*_test.go' '*.mjs' '*.py' 'internal/realdata/*' 'internal/testredis/*' 2>/dev/null)
  if [ -n "$hits" ]; then echo "tests read ../shared:"; echo "$hits"; return 1; fi
}
run standalone standalone
run go go test -race ./...
run interop npm --prefix interop test

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED suites: ${failed[*]}"
  exit 1
fi
echo "all suites passed"
