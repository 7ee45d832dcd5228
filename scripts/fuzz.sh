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

failed=()
targets=0
while IFS=: read -r file _ decl; do
  name=${decl#func }
  name=${name%%(*}
  pkg=./$(dirname "${file#./}")
  targets=$((targets + 1))
  echo "--- fuzz $name ($pkg, ${seconds}s)"
  if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "${seconds}s" "$pkg"; then
    failed+=("$name")
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
