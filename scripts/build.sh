#!/usr/bin/env bash
# Builds the payguard binary the way releases are built: static (CGO_ENABLED=0), reproducible (-trimpath, no
# build id, no VCS stamp from the toolchain, SOURCE_DATE_EPOCH exported for anything that reads it), and stamped
# with the version and commit that `payguard version` and the payguard_build_info metric report.
#
#   scripts/build.sh [out]                   # default out: bin/payguard
#   GOOS=linux GOARCH=arm64 scripts/build.sh bin/payguard-arm64
#   VERSION=1.2.3 COMMIT=abc123 scripts/build.sh   # the Dockerfile passes both (no .git in the build context)
#
# VERSION defaults to the chart's appVersion (charts/payguard/Chart.yaml), so the image and the chart say the
# same version; COMMIT to `git rev-parse HEAD`; SOURCE_DATE_EPOCH to the commit's time. scripts/repro.sh builds
# twice and compares the hashes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/bin/payguard}"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

app_version() { sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$ROOT/charts/payguard/Chart.yaml"; }
VERSION="${VERSION:-$(app_version)}"
COMMIT="${COMMIT:-$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)}"
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}"
export SOURCE_DATE_EPOCH
[ -n "$VERSION" ] || { echo "build.sh: no VERSION and no appVersion in charts/payguard/Chart.yaml" >&2; exit 1; }

PKG=github.com/payguard/payguard/internal/buildinfo
cd "$ROOT"
CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags "-s -w -buildid= -X $PKG.Version=$VERSION -X $PKG.Commit=$COMMIT" \
  -o "$OUT" ./cmd/payguard
echo "built $OUT: version $VERSION, commit $COMMIT (GOOS=$(go env GOOS) GOARCH=$(go env GOARCH))"
