#!/usr/bin/env bash
# The lint suite (scripts/test.sh runs it as "lint"): staticcheck, and deadcode twice.
#
#   1. staticcheck ./...            (its checks: staticcheck.conf)
#   2. deadcode -test ./...         code no program and no test reaches: dead, to be removed
#   3. deadcode ./...               code only tests reach, outside the packages that exist for tests: it
#                                   belongs in a _test.go file or a test package (issue 33)
#
# The tools are pinned and installed here into a directory of the module cache's parent, because CI starts
# with empty caches; a second run finds them built.
set -uo pipefail
cd "$(dirname "$0")/.."

STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE=golang.org/x/tools/cmd/deadcode@v0.52.0
bin=${PAYGUARD_LINT_BIN:-$(go env GOPATH)/payguard-lint/bin}
mkdir -p "$bin"
for tool in "$STATICCHECK" "$DEADCODE"; do
  name=${tool%@*}; name=${name##*/}; version=${tool#*@}
  if [ ! -x "$bin/$name" ] || ! go version -m "$bin/$name" | grep -q "[[:space:]]$version[[:space:]]"; then
    GOBIN=$bin go install "$tool" || { echo "lint: cannot install $tool"; exit 1; }
  fi
done

fail=0
echo "--- staticcheck ./..."
"$bin/staticcheck" ./... || fail=1

echo "--- deadcode -test ./... (unreachable from any program or test)"
out=$("$bin/deadcode" -test ./... 2>&1)
if [ -n "$out" ]; then echo "$out"; fail=1; fi

# Packages that exist for tests (their code is reached from tests only, by design), and the functions of
# production packages that are API for others than this repository's programs, each with its reason.
test_packages='^(internal/(testredis|testreport|testutil|docscheck|benchcpu|realdata|logbuf|plainurl/plainurltest)|interop|store/storetest|screening/screeningtest|screening/domain/domaintest|server/internal/(factest|metrictest)|x402/svm/svmtest)/'
api=(
  'proxy/notify/send.go:[0-9]+:[0-9]+: unreachable func: Verify$'          # docs/approvals.md: a webhook receiver checks signatures with it
  'screening/sanctions/csv.go:[0-9]+:[0-9]+: unreachable func: ParseCSV$'  # the parser of the list's CSV files; screening's integration test (another package) uses it
  '^x402/'                                                                # the wire codec's API for any Go x402 party (buyers, sellers, facilitators)
)
echo "--- deadcode ./... (reached from tests only)"
out=$("$bin/deadcode" ./... 2>&1 | grep -v -E "$test_packages")
for re in "${api[@]}"; do out=$(grep -v -E "$re" <<<"$out"); done
if [ -n "$out" ]; then
  echo "$out"
  echo "lint: the functions above are reached from tests only: move them into a _test.go file or a test package"
  fail=1
fi

if [ "$fail" = 0 ]; then echo "lint: clean"; fi
exit "$fail"
