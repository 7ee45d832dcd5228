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

run go go test -race ./...
run interop npm --prefix interop test
run chart charts/payguard/ci/check.sh
run dockerfile scripts/check-dockerfile.sh --allow-placeholder-digests

if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED suites: ${failed[*]}"
  exit 1
fi
echo "all suites passed"
