#!/usr/bin/env bash
# proxy-rss.sh: idle resident memory of a real `payguard proxy` (or `payguard serve`) holding the full SDN
# list (issue 36).
#
# Builds cmd/payguard, unpacks the repository's OFAC benchmark list (testdata/ofac: 2024-05-03 sdn.csv with
# the 2025-12 alt.csv, add.csv and sdn_comments.csv, as BenchmarkListRSS loads) into a temporary directory,
# starts `payguard proxy --offline --sanctions-dir DIR` on a free port with its own data directory, waits
# until it listens and has logged "sanctions list loaded", then SETTLE seconds more, and prints VmRSS, RssAnon, RssFile and VmHWM from
# /proc/PID/status. Then it stops the proxy and removes what it created.
#
#   screening/sanctions/testdata/bench/proxy-rss.sh            # SETTLE=15 seconds after start (default)
#   NOLIST=1 screening/sanctions/testdata/bench/proxy-rss.sh   # the same proxy without a list
#   BIN=/tmp/pg screening/sanctions/testdata/bench/proxy-rss.sh  # measure an existing binary
#   CMD=serve screening/sanctions/testdata/bench/proxy-rss.sh  # `payguard serve` instead (GOGC 400 unless set)
#
# GOGC and GOMEMLIMIT are whatever the environment says (unset: Go's defaults). Linux only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
bin=${BIN:-}
if [ -z "$bin" ]; then
	bin=$work/payguard
	(cd "$root" && go build -o "$bin" ./cmd/payguard)
fi
list=$work/list
mkdir -p "$list"
gunzip -c "$root/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz" >"$list/sdn.csv"
for f in alt add sdn_comments; do
	gunzip -c "$root/testdata/ofac/alt_add_comments_2025-12/$f.csv.gz" >"$list/$f.csv"
done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
args=("${CMD:-proxy}" --offline --listen "127.0.0.1:$port" --data-dir "$work/data")
if [ "${CMD:-proxy}" = proxy ]; then
	# The embedded default with the admin API on a free port too (8403 may be taken by another payguard).
	admin=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$bin" config default | sed "s#^  listen: 127.0.0.1:8403#  listen: 127.0.0.1:$admin#" >"$work/proxy.yaml"
	args+=(--config "$work/proxy.yaml")
fi
if [ "${CMD:-proxy}" = serve ]; then
	# serve needs a fee configuration: the server benchmark's (server/testdata/bench/bench.yaml), on the
	# embedded default store (bolt) as in its STORE=bolt runs.
	sed -e "s#/tmp/payguard-bench/receipt-keys.json#$work/receipt-keys.json#" -e "s#^  driver: memory#  driver: bolt\n  path: $work/payguard.db#" \
		"$root/server/testdata/bench/bench.yaml" >"$work/serve.yaml"
	args+=(--config "$work/serve.yaml")
fi
[ -z "${NOLIST:-}" ] && args+=(--sanctions-dir "$list")
"$bin" "${args[@]}" >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	(echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || { cat "$work/log"; exit 1; }
	sleep 0.1
done
if [ -z "${NOLIST:-}" ]; then
	for _ in $(seq 1 600); do
		grep -q 'sanctions list loaded' "$work/log" && break
		sleep 0.1
	done
	grep -q 'sanctions list loaded' "$work/log" || { cat "$work/log"; exit 1; }
fi
sleep "${SETTLE:-15}"
kill -0 "$pid" 2>/dev/null || { cat "$work/log"; exit 1; }
grep -E '^(VmRSS|RssAnon|RssFile|VmHWM)' "/proc/$pid/status" | tr -s ' \t' ' ' | paste -sd' '
