#!/usr/bin/env bash
# Reproducibility check: builds the binary twice with scripts/build.sh, from two copies of the source at
# different paths and with two empty build caches (so nothing is reused between the builds), and fails unless
# the two binaries hash the same. Runs without Docker; the Dockerfile builds with the same script.
#
#   scripts/repro.sh                       # the host's GOOS/GOARCH
#   GOARCH=arm64 scripts/repro.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d -t payguard-repro-XXXXXX)"
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
COMMIT="${COMMIT:-$(git -C "$ROOT" rev-parse HEAD)}"
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct)}"
export COMMIT SOURCE_DATE_EPOCH

for i in 1 2; do
  mkdir -p "$WORK/src$i" "$WORK/cache$i"
  # The committed tree (git archive), so an untracked file cannot make the two builds differ or pass by luck.
  git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src$i"
  GOCACHE="$WORK/cache$i" GOFLAGS=-mod=readonly "$WORK/src$i/scripts/build.sh" "$WORK/payguard.$i" >/dev/null
done
a=$(sha256sum "$WORK/payguard.1" | cut -d' ' -f1)
b=$(sha256sum "$WORK/payguard.2" | cut -d' ' -f1)
if [ "$a" != "$b" ]; then
  echo "repro.sh: the two builds differ: $a vs $b" >&2
  exit 1
fi
echo "reproducible: two builds of $COMMIT ($(go env GOOS)/$(go env GOARCH)) both hash sha256:$a"
