#!/usr/bin/env bash
# The whole test suite, as README.md gives it and .ci/run runs it. Every suite runs even when an earlier one
# fails (a Go failure must not hide the interop results), and the script exits non-zero if any failed.
#
# The run ends with a summary table (each suite: passed, failed, skipped, time) and, last and alone on its
# line, "N passed, N failed". Go's tests are rendered by internal/cmd/testreport from `go test -json`: one
# line per package and the output of failing tests only (without go-redis's dial errors from the tests that
# point it at an absent Redis on purpose). Each suite's full output is kept in a log whose path the table
# gives when the suite failed (PAYGUARD_TEST_LOGS=DIR keeps them all in DIR).
#
#   scripts/test.sh                                   every suite
#   PAYGUARD_TEST_SUITES="standalone docs" scripts/test.sh    only these (names as in the table)
#   PAYGUARD_TEST_SUITES=lint scripts/test.sh                staticcheck and deadcode (scripts/lint.sh)
set -uo pipefail
cd "$(dirname "$0")/.."

logs=${PAYGUARD_TEST_LOGS:-}
if [ -z "$logs" ]; then logs=$(mktemp -d /tmp/payguard-test.XXXXXX); fi
mkdir -p "$logs"
results=$logs/results.tsv
: >"$results"
report=$logs/testreport
if ! go build -o "$report" ./internal/cmd/testreport; then
  echo "scripts/test.sh: cannot build internal/cmd/testreport (the Go toolchain or the module is broken)"
  echo "0 passed, 1 failed"
  exit 1
fi

wanted() {
  [ -z "${PAYGUARD_TEST_SUITES:-}" ] && return 0
  case " ${PAYGUARD_TEST_SUITES//,/ } " in *" $1 "*) return 0 ;; esac
  return 1
}

# record NAME EXIT PASSED FAILED SKIPPED START [NOTE]
record() {
  local note=${7:-}
  if [ "$2" != 0 ] || [ "$4" != 0 ]; then note="${note:+$note; }log: $logs/$1.log"; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" $((SECONDS - $6)) "$note" >>"$results"
}

# check NAME CMD...: a suite that is one check (passed or failed).
check() {
  local name=$1; shift
  wanted "$name" || return 0
  echo "=== $name: $*"
  local start=$SECONDS rc
  "$@" 2>&1 | tee "$logs/$name.log"; rc=${PIPESTATUS[0]}
  if [ "$rc" = 0 ]; then record "$name" 0 1 0 0 "$start"; else record "$name" "$rc" 0 1 0 "$start"; fi
}

# counted NAME RUNNER CMD...: a suite whose runner (node, pytest) prints closing counts.
counted() {
  local name=$1 runner=$2; shift 2
  wanted "$name" || return 0
  echo "=== $name: $*"
  local start=$SECONDS rc counts note=""
  "$@" 2>&1 | tee "$logs/$name.log"; rc=${PIPESTATUS[0]}
  if grep -q '^## SKIPPED:' "$logs/$name.log"; then
    note="suite skipped: $(sed -n 's/^## Reason: //p' "$logs/$name.log" | head -1)"
    record "$name" "$rc" 0 0 1 "$start" "$note"
    return
  fi
  if ! counts=$("$report" count "$runner" "$logs/$name.log"); then
    counts="0 1 0"; note="no $runner closing lines"
  fi
  # shellcheck disable=SC2086
  record "$name" "$rc" $counts "$start" "$note"
}

# gotest NAME PACKAGES...: go test -race -json, rendered by testreport.
gotest() {
  local name=$1; shift
  wanted "$name" || return 0
  echo "=== $name: go test -race $*"
  local start=$SECONDS rc
  go test -race -json "$@" 2>&1 | tee "$logs/$name.json" | "$report" go "$logs/$name.counts" | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  # shellcheck disable=SC2046
  record "$name" "$rc" $(cat "$logs/$name.counts" 2>/dev/null || echo "0 1 0") "$start"
}

# No test or script may read outside the repository (a fresh clone has nothing beside it): not a test file,
# and not a script's default (a benchmark's list or tool) either. Comment lines may name the shared sources.
standalone() {
  local hits
  hits=$(git grep -n -e '\.\./share[d]' -e '/work/share[d]' -- '*_test.go' '*.mjs' '*.py' 'internal/realdata/*' 'internal/testredis/*' 2>/dev/null)
  hits+=$(git grep -n -e '\.\./share[d]' -e '/work/share[d]' -- '*.sh' 2>/dev/null | grep -v -E '^[^:]+:[0-9]+:[[:space:]]*#')
  if [ -n "$hits" ]; then echo "tests or scripts read outside the repository (the shared folder beside it):"; echo "$hits"; return 1; fi
  echo "nothing reads outside the repository"
}

# Node's runner prints TAP when its output is not a terminal: the spec reporter is the readable one.
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--test-reporter=spec"

check standalone standalone
# staticcheck, and deadcode for code nothing reaches or only tests reach (scripts/lint.sh installs the pinned tools).
check lint scripts/lint.sh
# The documentation check (internal/docscheck: links, cited paths and test names, commands) is its own row.
# shellcheck disable=SC2046
gotest go $(go list ./... | grep -v '/internal/docscheck$')
gotest docs ./internal/docscheck
counted interop node npm --prefix interop test
# The in-process guards (docs/SPEC.md §12): Node's test runner and pytest, each on every decision vector.
# The Python suite skips with a loud notice where python3 is missing, and fails instead under CI=true.
counted clients-js node npm --prefix clients/js test
counted clients-python pytest scripts/test-python.sh
check chart charts/payguard/ci/check.sh
check dockerfile scripts/check-dockerfile.sh
# Each benchmark behind a figure of docs/BENCHMARKS.md (issue 36) once: a smoke, never a timed assertion.
check bench-smoke scripts/bench-smoke.sh
# The adversarial suite: every fuzz target for 20 s in CI (CI=true), or PAYGUARD_FUZZ_SECONDS each when set.
fuzz_seconds=${PAYGUARD_FUZZ_SECONDS:-}
if [ -z "$fuzz_seconds" ] && [ "${CI:-}" = "true" ]; then fuzz_seconds=20; fi
if [ -n "$fuzz_seconds" ]; then check fuzz scripts/fuzz.sh "$fuzz_seconds"; fi

"$report" summary "$results"; rc=$?
# A passing run keeps nothing behind unless PAYGUARD_TEST_LOGS asked for the logs.
if [ "$rc" = 0 ] && [ -z "${PAYGUARD_TEST_LOGS:-}" ]; then rm -rf "$logs"; fi
exit "$rc"
