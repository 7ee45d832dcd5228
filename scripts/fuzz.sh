#!/usr/bin/env bash
# The adversarial suite's fuzzing: every Go fuzz target in the repo (`grep -rn '^func Fuzz'`), each for the
# given number of seconds (default 20), one `go test -run '^$' -fuzz '^FuzzX$' -fuzztime Ns ./pkg` per
# target. Every target runs even when an earlier one fails; the script exits non-zero if any crashed (the
# crashing input is written under the package's testdata/fuzz/FuzzX/, as go test says). scripts/test.sh runs
# it in CI (CI=true) or when PAYGUARD_FUZZ_SECONDS is set.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
case $seconds in
  ''|*[!0-9]*) echo "scripts/fuzz.sh: seconds must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac

# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline exceeded" when -fuzztime ends while
# a worker is mid-call (golang/go#75804, fixed in Go 1.27): no input is written, nothing is found. Such a
# failure, and only such a failure, is retried once; a real finding (a written failing input, a panic, a test
# error) fails at once, and a second deadline failure fails too.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
deadline_flake() {
  grep -q 'context deadline exceeded' "$log" && ! grep -q -e 'Failing input written' -e 'panic:' -e '_test.go:[0-9]' "$log"
}
fuzz_one() {
  go test -run '^$' -fuzz "^${1}\$" -fuzztime "${seconds}s" "$2" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

failed=()
targets=0
while IFS=: read -r file _ decl; do
  name=${decl#func }
  name=${name%%(*}
  pkg=./$(dirname "${file#./}")
  targets=$((targets + 1))
  echo "--- fuzz $name ($pkg, ${seconds}s)"
  if ! fuzz_one "$name" "$pkg"; then
    if deadline_flake; then
      echo "--- fuzz $name: a bare 'context deadline exceeded' with no input written (golang/go#75804); once more"
      fuzz_one "$name" "$pkg" || failed+=("$name")
    else
      failed+=("$name")
    fi
  fi
done < <(grep -rn '^func Fuzz' --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git . | sort)

if [ "$targets" -eq 0 ]; then
  echo "scripts/fuzz.sh: no fuzz targets found" >&2
  exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets that failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: all $targets targets ran ${seconds}s without a failure"
