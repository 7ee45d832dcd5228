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
# The in-process guards (docs/SPEC.md §12): Node's test runner and pytest, each on every decision vector.
# The Python suite skips with a loud notice where python3 is missing, and fails instead under CI=true.
run clients-js npm --prefix clients/js test
run clients-python scripts/test-python.sh
run chart charts/payguard/ci/check.sh
run dockerfile scripts/check-dockerfile.sh
# The adversarial suite: every fuzz target for 20 s in CI (CI=true), or PAYGUARD_FUZZ_SECONDS each when set.
fuzz_seconds=${PAYGUARD_FUZZ_SECONDS:-}
if [ -z "$fuzz_seconds" ] && [ "${CI:-}" = "true" ]; then fuzz_seconds=20; fi
if [ -n "$fuzz_seconds" ]; then run fuzz scripts/fuzz.sh "$fuzz_seconds"; fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED suites: ${failed[*]}"
  exit 1
fi
echo "all suites passed"
