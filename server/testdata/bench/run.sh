#!/bin/sh
# Load figures for docs/benchmarks/server.md: builds payguard, starts `payguard serve` once with the memory
# store and once with the bolt store (the embedded default), runs wrk against POST /v1/preflight?trial=1 and
# GET /v1/check?trial=1 on each, prints one table, and stops what it started.
#
# Run from anywhere:   server/testdata/bench/run.sh
# Knobs (environment): DURATION=15s THREADS=2 CONNS=32 WARMUP=3s STORES="memory bolt"
#                      SANCTIONS_DIR=DIR (default: testdata/ofac/sdn_csv_2024-05-03, decompressed) KEEP=1 (keep the work dir)
#                      PAYGUARD_BIN=/path/to/payguard (use that binary instead of building one, e.g. an older
#                      commit's for a before/after comparison)
#
# The trial path is the real one (3 free calls per client IP per UTC day, counted in the store on every
# request); each request carries a random X-Forwarded-For, believed because the config trusts 127.0.0.1.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
DURATION=${DURATION:-15s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-32}
WARMUP=${WARMUP:-3s}
STORES=${STORES:-memory bolt}

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install -y wrk)" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 2; }
work=$(mktemp -d /tmp/payguard-bench.XXXXXX)
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "work dir kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM
# The list: SANCTIONS_DIR when set, else the repository's own copy of OFAC's 2024-05-03 sdn.csv, decompressed
# into the work directory: the script needs nothing outside the repository.
if [ -z "${SANCTIONS_DIR:-}" ]; then
	SANCTIONS_DIR=$work/sdn
	mkdir -p "$SANCTIONS_DIR"
	gzip -dc "$root/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz" >"$SANCTIONS_DIR/sdn.csv"
fi
[ -d "$SANCTIONS_DIR" ] || { echo "SANCTIONS_DIR $SANCTIONS_DIR is not a directory" >&2; exit 2; }

if [ -n "${PAYGUARD_BIN:-}" ]; then
	cp "$PAYGUARD_BIN" "$work/payguard"
	built="binary $PAYGUARD_BIN"
else
	built="built at $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	(cd "$root" && go build -o "$work/payguard" ./cmd/payguard)
fi

# start_serve STORE PORT: writes the config (bench.yaml with the port, store and paths changed) and waits
# until /health answers.
start_serve() {
	store=$1 port=$2
	cfg="$work/$store.yaml"
	sed -e "s/18091/$port/g" -e "s/^  driver: memory\$/  driver: $store/" \
		-e "s#/tmp/payguard-bench/receipt-keys.json#$work/receipt-keys.json#" "$here/bench.yaml" >"$cfg"
	if [ "$store" = bolt ]; then
		printf '  path: %s\n' "$work/payguard.db" >"$work/path.line"
		sed -i "/^  driver: bolt\$/r $work/path.line" "$cfg"
	fi
	"$work/payguard" serve --config "$cfg" --offline --sanctions-dir "$SANCTIONS_DIR" \
		>"$work/serve-$store.log" 2>&1 &
	pid=$!
	i=0
	until curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "payguard serve ($store) did not become healthy; log:" >&2
			tail -20 "$work/serve-$store.log" >&2
			exit 1
		fi
		sleep 0.1
	done
}

stop_serve() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=""
}

# run_wrk NAME SCRIPT URL: one measured run, one table row.
run_wrk() {
	name=$1 script=$2 url=$3
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	out="$work/wrk-$(echo "$name" | tr -c 'a-z0-9\n' '_').txt"
	wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$here/$script" "$url" >"$out" 2>&1
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
	p50=$(awk '$1 == "50%" {print $2}' "$out")
	p90=$(awk '$1 == "90%" {print $2}' "$out")
	p99=$(awk '$1 == "99%" {print $2}' "$out")
	bad=$(awk -F': ' '/status errors \(non-2xx\)/ {print $2}' "$out")
	sock=$(awk '/Socket errors/ {sub(/^ *Socket errors: */, ""); print}' "$out")
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$rps" "$p50" "$p90" "$p99" "${bad:-?}" "${sock:-none}" "$load"
}

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')   payguard $built   nproc: $(nproc)   wrk -t$THREADS -c$CONNS -d$DURATION --latency"
echo
echo "| route / store | req/s | p50 | p90 | p99 | non-2xx | socket errors | loadavg at start |"
echo "|---|---:|---:|---:|---:|---:|---|---|"
port=18091
for store in $STORES; do
	start_serve "$store" "$port"
	base="http://127.0.0.1:$port"
	wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s "$here/preflight.lua" "$base" >/dev/null 2>&1 # warm-up, not reported
	run_wrk "preflight / $store" preflight.lua "$base"
	run_wrk "check / $store" check.lua "$base"
	stop_serve
	port=$((port + 1))
done
