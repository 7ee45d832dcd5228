#!/bin/sh
# Open-loop load for docs/BENCHMARKS.md: POST /v1/preflight?trial=1 at fixed request rates. The load tool is
# openloop/ (LOADGEN=openloop, the default: built from this repository, wrk2's constant-rate model with
# coordinated omission corrected, half of vegeta's CPU per request), vegeta (LOADGEN=vegeta;
# `GOBIN=/tmp/gobin go install github.com/tsenart/vegeta/v12@latest`) or wrk2 (LOADGEN=wrk2, WRK2=path; not
# packaged by Debian). Neither of the last two is a dependency of the repository.
# wrk (run.sh) keeps a fixed number of connections busy, so its latency is queueing at saturation; a fixed
# rate shows the latency a given offered load gets. Every request has its own client IP (X-Forwarded-For,
# trusted from 127.0.0.1 in bench.yaml), so the real trial counter is taken and never runs out; the server is
# restarted for each rate so counters from the previous rate do not turn into 402s.
#
# Usage: server/testdata/bench/rate.sh [RATE ...]   (default: 1000 2500 5000; DURATION=6s for vegeta, 12s else)
# STORE=bolt runs the server on the embedded default store (a bbolt file in the work directory) instead of
# bench.yaml's memory store.
# The load generator runs on the same two cores as the server, unless SERVER_CPUS and LOAD_CPUS pin them apart
# (taskset lists, e.g. SERVER_CPUS=0 LOAD_CPUS=1: one dedicated core each). Each run prints the server's CPU
# time per request (from /proc) next to the latencies. FLOOR=1 runs the same load against floor/ (net/http
# answering 2.4 KB with no work) instead of payguard: the latency any Go server gets here at that rate.
# FLOOR=both runs, at each rate, the floor server and then payguard, and ends with payguard's CPU per request
# as a multiple of the floor's from the same minutes (the figure to compare across machines and loads).
# PAYGUARD2=path adds a second payguard build (payguard2) after payguard at each rate: before and after in
# one run. Each payguard run starts on a new bbolt file (STORE=bolt).
# Besides the peak RSS (which includes the start, the sanctions list's load), each run prints the RSS at
# its end: what serving at that rate holds.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
LOADGEN=${LOADGEN:-openloop}
VEGETA=${VEGETA:-/tmp/gobin/vegeta}
WRK2=${WRK2:-/tmp/wrk2/wrk}
WRK2_CONNS=${WRK2_CONNS:-16}
if [ "$LOADGEN" = vegeta ]; then DURATION=${DURATION:-6s}; else DURATION=${DURATION:-12s}; fi
case $LOADGEN in
openloop) ;;
vegeta) [ -x "$VEGETA" ] || { echo "vegeta not found at $VEGETA" >&2; exit 2; } ;;
wrk2) [ -x "$WRK2" ] || { echo "wrk2 not found at $WRK2" >&2; exit 2; } ;;
*) echo "LOADGEN must be openloop, vegeta or wrk2" >&2; exit 2 ;;
esac
rates=${*:-1000 2500 5000}
work=$(mktemp -d /tmp/payguard-rate.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM
# The list: SANCTIONS_DIR when set, else the repository's own copy of OFAC's 2024-05-03 sdn.csv (the benchmark
# list), decompressed into the work directory: the script needs nothing outside the repository.
if [ -z "${SANCTIONS_DIR:-}" ]; then
	SANCTIONS_DIR=$work/sdn
	mkdir -p "$SANCTIONS_DIR"
	gzip -dc "$root/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz" >"$SANCTIONS_DIR/sdn.csv"
fi
[ -d "$SANCTIONS_DIR" ] || { echo "SANCTIONS_DIR $SANCTIONS_DIR is not a directory" >&2; exit 2; }
(cd "$root" && go build -o "$work/payguard" ./cmd/payguard && go build -o "$work/floor" ./server/testdata/bench/floor &&
	go build -o "$work/openloop" ./server/testdata/bench/openloop)
sed -e "s#/tmp/payguard-bench/receipt-keys.json#$work/receipt-keys.json#" "$here/bench.yaml" >"$work/mem.yaml"
if [ "${STORE:-memory}" = bolt ]; then # the embedded default store: trial counters in a bbolt file
	sed -i "s#^  driver: memory#  driver: bolt\n  path: $work/payguard.db#" "$work/mem.yaml"
fi
# The body of preflight.lua; for vegeta, 40,000 targets with it, one client IP each (openloop and wrk2 make
# their own addresses).
sed -n "s/^wrk.body = '\(.*\)'\$/\1/p" "$here/preflight.lua" >"$work/body.json"
if [ "$LOADGEN" = vegeta ]; then
	body=$(base64 -w0 "$work/body.json")
	i=0
	while [ $i -lt 40000 ]; do
		printf '{"method":"POST","url":"http://127.0.0.1:18091/v1/preflight?trial=1","body":"%s","header":{"Content-Type":["application/json"],"X-Forwarded-For":["10.%d.%d.%d"]}}\n' \
			"$body" $((i / 65536)) $((i / 256 % 256)) $((i % 256))
		i=$((i + 1))
	done >"$work/targets.jsonl"
fi
case ${FLOOR:-} in
both) targets="floor payguard" ;;
"") targets=payguard ;;
*) targets=floor ;;
esac
# PAYGUARD2=path runs a second payguard binary (another build, for before/after in one run) right after
# payguard at each rate, with the same configuration; it is labelled payguard2.
if [ -n "${PAYGUARD2:-}" ]; then
	[ -x "$PAYGUARD2" ] || { echo "PAYGUARD2 $PAYGUARD2 is not an executable" >&2; exit 2; }
	[ "$targets" = floor ] || targets="$targets payguard2"
fi
ratios=""
for rate in $rates; do for target in $targets; do
	if [ "$target" = floor ]; then
		${SERVER_CPUS:+taskset -c "$SERVER_CPUS"} "$work/floor" >"$work/serve.log" 2>&1 &
	else
		bin=$work/payguard
		[ "$target" = payguard2 ] && bin=$PAYGUARD2
		# A new bbolt file for every run: openloop's client addresses are the same in every run, and counters
		# left by the previous one would make every call a client's second (or, by the fourth run, a 402).
		rm -f "$work"/payguard.db*
		${SERVER_CPUS:+taskset -c "$SERVER_CPUS"} "$bin" serve --config "$work/mem.yaml" --offline --sanctions-dir "$SANCTIONS_DIR" >"$work/serve.log" 2>&1 &
	fi
	pid=$!
	until curl -fs -o /dev/null http://127.0.0.1:18091/health; do sleep 0.2; done
	[ "$target" = floor ] && label=", FLOOR server" || label=", $target (${STORE:-memory} store)"
	echo "rate $rate/s, $DURATION, $LOADGEN$label, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
	cpu0=$(awk '{print $14+$15}' "/proc/$pid/stat")
	if [ "$LOADGEN" = openloop ]; then
		# GOMAXPROCS=1: the tool needs 0.3 of a core at 5,000/s; more threads only take turns from the server.
		${LOAD_CPUS:+taskset -c "$LOAD_CPUS"} env GOMAXPROCS=1 "$work/openloop" -body "$work/body.json" -rate "$rate" \
			-c "${OPENLOOP_CONNS:-16}" -d "$DURATION" | tee "$work/openloop.out"
		n=$(sed -n 's/.*; \([0-9]*\) scheduled in all.*/\1/p' "$work/openloop.out")
	elif [ "$LOADGEN" = wrk2 ]; then
		${LOAD_CPUS:+taskset -c "$LOAD_CPUS"} "$WRK2" -t1 -c"$WRK2_CONNS" -d"$DURATION" -R"$rate" --latency \
			-s "$here/preflight.lua" http://127.0.0.1:18091 >"$work/wrk2.out" 2>&1
		awk '/^ +(50|90|99|99\.9)\.0+%/{printf "p%s %s  ", $1, $2} /Requests\/sec|non-2xx|Socket errors/{printf "| %s ", $0} END{print ""}' "$work/wrk2.out"
		n=$(awk '/requests in/{print $1}' "$work/wrk2.out")
	else
		${LOAD_CPUS:+taskset -c "$LOAD_CPUS"} "$VEGETA" attack -format=json -targets="$work/targets.jsonl" -rate="$rate/s" -duration="$DURATION" -max-workers=64 -max-body=0 >"$work/vegeta.bin"
		"$VEGETA" report <"$work/vegeta.bin" | sed -n '1,3p;/Status/p'
		n=$("$VEGETA" report -type=json <"$work/vegeta.bin" | sed -n 's/.*"requests":\([0-9]*\).*/\1/p')
	fi
	cpu1=$(awk '{print $14+$15}' "/proc/$pid/stat")
	us=$(( (cpu1 - cpu0) * 10000000 / ${n:-1} / 1000 ))
	echo "server CPU: $us µs per request (${n:-?} requests); peak RSS $(awk '/^VmHWM/{print int($2/1024)}' "/proc/$pid/status") MiB, RSS at the end $(awk '/^VmRSS/{print int($2/1024)}' "/proc/$pid/status") MiB"
	if [ "$target" = floor ]; then floor_us=$us; elif [ -n "${floor_us:-}" ] && [ "$floor_us" -gt 0 ]; then
		ratios="$ratios$rate/s: $target $us µs, floor $floor_us µs of CPU per request: $(awk "BEGIN{printf \"%.1f\", $us/$floor_us}")×
"
	fi
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done; done
[ -z "$ratios" ] || printf 'CPU per request against the floor, same run:\n%s' "$ratios"
