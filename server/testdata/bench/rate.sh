#!/bin/sh
# Open-loop load for docs/BENCHMARKS.md: POST /v1/preflight?trial=1 at fixed request rates with vegeta
# (`GOBIN=/tmp/gobin go install github.com/tsenart/vegeta/v12@latest`; not a dependency of the repository).
# wrk (run.sh) keeps a fixed number of connections busy, so its latency is queueing at saturation; a fixed
# rate shows the latency a given offered load gets. Every request has its own client IP (X-Forwarded-For,
# trusted from 127.0.0.1 in bench.yaml), so the real trial counter is taken and never runs out; the server is
# restarted for each rate so counters from the previous rate do not turn into 402s.
#
# Usage: server/testdata/bench/rate.sh [RATE ...]        (default: 1000 2500 5000; DURATION=6s)
# The load generator runs on the same two cores as the server, unless SERVER_CPUS and LOAD_CPUS pin them apart
# (taskset lists, e.g. SERVER_CPUS=0 LOAD_CPUS=1: one dedicated core each).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
VEGETA=${VEGETA:-/tmp/gobin/vegeta}
DURATION=${DURATION:-6s}
SANCTIONS_DIR=${SANCTIONS_DIR:-/work/shared/data/ofac/sdn_csv_2024-05-03}
[ -x "$VEGETA" ] || { echo "vegeta not found at $VEGETA" >&2; exit 2; }
rates=${*:-1000 2500 5000}
work=$(mktemp -d /tmp/payguard-rate.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM
(cd "$root" && go build -o "$work/payguard" ./cmd/payguard)
sed -e "s#/tmp/payguard-bench/receipt-keys.json#$work/receipt-keys.json#" "$here/bench.yaml" >"$work/mem.yaml"
# 40,000 targets, one client IP each, the body of preflight.lua.
body=$(sed -n "s/^wrk.body = '\(.*\)'\$/\1/p" "$here/preflight.lua" | base64 -w0)
i=0
while [ $i -lt 40000 ]; do
	printf '{"method":"POST","url":"http://127.0.0.1:18091/v1/preflight?trial=1","body":"%s","header":{"Content-Type":["application/json"],"X-Forwarded-For":["10.%d.%d.%d"]}}\n' \
		"$body" $((i / 65536)) $((i / 256 % 256)) $((i % 256))
	i=$((i + 1))
done >"$work/targets.jsonl"
for rate in $rates; do
	${SERVER_CPUS:+taskset -c "$SERVER_CPUS"} "$work/payguard" serve --config "$work/mem.yaml" --offline --sanctions-dir "$SANCTIONS_DIR" >"$work/serve.log" 2>&1 &
	pid=$!
	until curl -fs -o /dev/null http://127.0.0.1:18091/health; do sleep 0.2; done
	echo "rate $rate/s, $DURATION, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
	${LOAD_CPUS:+taskset -c "$LOAD_CPUS"} "$VEGETA" attack -format=json -targets="$work/targets.jsonl" -rate="$rate/s" -duration="$DURATION" -max-workers=64 |
		"$VEGETA" report | sed -n '1,3p;/Status/p'
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done
