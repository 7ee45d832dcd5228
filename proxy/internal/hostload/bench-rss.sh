#!/usr/bin/env bash
# Proxy RSS idle and after N decided 402s (issue 36: <= 64 MB after 100,000 on the bolt store), on ports of
# its own (another bench may hold bench-side-by-side.sh's). Starts proxy-bench's upstream (GET /402 is an x402
# v2 challenge), payguard with the OFAC list (bolt store, every 402 allowed and left unpaid:
# max_unpaid_per_site 1,000,000), and drives BURSTS bursts of N 402s with loadgen -status 402 -c C. Prints
# VmRSS with its anonymous and file-backed parts, VmHWM and the data directory's size after each.
#   PROXY_BENCH=<proxy-bench checkout> PG_BIN=/path/to/payguard proxy/internal/hostload/bench-rss.sh
#   N=100000 C=8 BURSTS=2 PORT=29400 MAX_UNPAID=1000000 ...   # the defaults
#   MAX_UNPAID=1000 ...                      # the default bound: past 1,000 a site's 402s are refused, not ticketed
#   GOMEMLIMIT=48MiB ...                     # the Go runtime's soft memory limit, passed to payguard
# A build with a pprof listener on PG_PPROF (host:port; not part of the repository) also saves heap profiles
# to /tmp/pgrss-heap-*.pb.gz and prints the runtime's MemStats.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench-rss}
[ -d "$BENCH_DIR" ] || { cp -r "${PROXY_BENCH:?BENCH_DIR $BENCH_DIR does not exist: set PROXY_BENCH to a proxy-bench checkout}" "$BENCH_DIR"; chmod -R u+w "$BENCH_DIR"; }
cd "$BENCH_DIR"
PG_BIN=${PG_BIN:-/tmp/pgbin/payguard} PG_DIR=${PG_DIR:-/tmp/pgbench-rss}
N=${N:-100000} C=${C:-8} BURSTS=${BURSTS:-2} PORT=${PORT:-29400}
UP=127.0.0.1:$PORT UPS=127.0.0.1:$((PORT + 1)) PGL=127.0.0.1:$((PORT + 2)) PGA=127.0.0.1:$((PORT + 3))
go build -o bin/ ./cmd/upstream ./cmd/loadgen
mkdir -p out/sdn
gzip -dc "$REPO/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz" >out/sdn/sdn.csv
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_port() { for _ in $(seq 600); do (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing on $1" >&2; exit 1; }
for a in $UP $UPS $PGL $PGA; do
  if (exec 3<>"/dev/tcp/${a%:*}/${a#*:}") 2>/dev/null; then echo "$a is taken: set PORT" >&2; exit 1; fi
done
bin/upstream -http "$UP" -https "$UPS" -ca-out out/upstream-ca.pem >out/rss-upstream.log 2>&1 & PIDS+=($!)
wait_port "$UP"
rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"
cat >"$PG_DIR/payguard.yaml" <<YAML
proxy:
  listen: $PGL
  data_dir: $PG_DIR/data
  ca_cert_file: $PG_DIR/data/ca/payguard-ca.pem
  ca_key_file: $PG_DIR/data/ca/payguard-ca-key.pem
  upstream_ca_files: [$PWD/out/upstream-ca.pem]
  hold_wait: 0s
  max_unpaid_per_site: ${MAX_UNPAID:-1000000}
admin:
  listen: $PGA
store:
  driver: bolt
  path: $PG_DIR/data/payguard.db
keys:
  receipt_key_file: $PG_DIR/data/receipt-keys.json
rules:
  allowed_networks: ["eip155:84532"]
  daily_cap_usd: 1000000000
YAML
"$PG_BIN" proxy --config "$PG_DIR/payguard.yaml" --offline --sanctions-dir out/sdn >out/rss-payguard.log 2>&1 & PG=$!; PIDS+=($PG)
wait_port "$PGL"
kb() { awk -v k="$2:" '$1==k{print $2}' "/proc/$1/status"; }
mb() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1024}'; }
rss() { echo "VmRSS $(mb "$(kb "$PG" VmRSS)") MB (anonymous $(mb "$(kb "$PG" RssAnon)"), file-backed $(mb "$(kb "$PG" RssFile)")), VmHWM $(mb "$(kb "$PG" VmHWM)") MB"; }
heap() {
  [ -n "${PG_PPROF:-}" ] || return 0
  curl -fsS "http://$PG_PPROF/debug/pprof/heap" -o "/tmp/pgrss-heap-$1.pb.gz" || return 0
  curl -fsS "http://$PG_PPROF/debug/pprof/heap?debug=1" | grep -E '^# (HeapAlloc|HeapSys|HeapInuse|HeapReleased|NextGC) ' | tr '\n' ' ' || true
  echo
}
sleep "${SETTLE:-5}"
IDLE=$(kb "$PG" VmRSS)
echo "load $(cut -d' ' -f1-3 /proc/loadavg); payguard idle: $(rss)"
heap idle
for b in $(seq "$BURSTS"); do
  n=0 errs=0
  while [ "$n" -lt "$N" ]; do
    bin/loadgen -url "http://$UP/402" -status 402 -c "$C" -d 5s -warmup 0s -proxy "http://$PGL" >"$PG_DIR/l.json"
    read -r got bad < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["requests"], r["errors"])' "$PG_DIR/l.json")
    n=$((n + got + bad)) errs=$((errs + bad))
  done
  sleep "${SETTLE:-5}"
  echo "burst $b: $n decisions ($errs of them not answered 402: refused past the bound, or failed); $(rss); idle + $(mb $(($(kb "$PG" VmRSS) - IDLE))) MB; data $(du -sh "$PG_DIR/data" | cut -f1); load $(cut -d' ' -f1-3 /proc/loadavg)"
  heap "burst$b"
done
grep -c '"msg":"decision"' out/rss-payguard.log || true
