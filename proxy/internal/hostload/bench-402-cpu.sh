#!/usr/bin/env bash
# CPU per decided 402 of every process on the path (issue 36, redis402c): loadgen -status 402 at C (default 8)
# for D (default 8s), plain HTTP, through bare goproxy, payguard and (with bench-side-by-side.sh's PG2_STORE)
# payguard2 in turn, ROUNDS times (default 2); around each slice the CPU ticks (/proc/<pid>/stat, user + sys)
# of the proxy, the Redis at PG_REDIS (when it is on this host: the store's share of a decision), the upstream
# and loadgen itself. Run with the servers of bench-side-by-side.sh up:
#   PG_STORE=redis PG_REDIS=127.0.0.1:16400 PG2_STORE=redis PG2_BIN=<other build> PG_SERVE=$PWD/bench-402-cpu.sh ./bench-side-by-side.sh
set -euo pipefail
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench}
[ -d "$BENCH_DIR" ] || { cp -r "${PROXY_BENCH:?BENCH_DIR $BENCH_DIR does not exist: set PROXY_BENCH to a proxy-bench checkout}" "$BENCH_DIR"; chmod -R u+w "$BENCH_DIR"; }
cd "$BENCH_DIR"
C=${C:-8} D=${D:-8s} ROUNDS=${ROUNDS:-2}
RES=$(mktemp -d /tmp/pg402cpu.XXXXXX); trap 'rm -rf "$RES"' EXIT
pidof_port() { ss -ltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
ticks() { if [ -n "$1" ]; then awk '{print $14+$15}' "/proc/$1/stat"; else echo 0; fi; }
UP=$(pidof_port 18080)
RS=$(pidof_port "$(echo "${PG_REDIS:-127.0.0.1:6379}" | cut -d: -f2)" || true)
echo "target     402s  402s/s  proxy µs/402  redis µs/402  upstream  loadgen  (c=$C, $D, load $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq "$ROUNDS"); do
  for t in goproxy payguard ${PG2:+payguard2}; do
    case $t in goproxy) port=18081 ;; payguard) port=19402 ;; payguard2) port=19412 ;; esac
    PX=$(pidof_port $port)
    u0=$(ticks "$UP") x0=$(ticks "$PX") r0=$(ticks "$RS")
    /usr/bin/time -f "%U %S" -o "$RES/time" bin/loadgen -url http://127.0.0.1:18080/402 -status 402 -c "$C" -d "$D" \
      -proxy http://127.0.0.1:$port > "$RES/lg.json"
    u1=$(ticks "$UP") x1=$(ticks "$PX") r1=$(ticks "$RS")
    python3 - "$RES" "$t" "$(getconf CLK_TCK)" "$u0" "$u1" "$x0" "$x1" "$r0" "$r1" <<'PY'
import json, sys
res, t, hz = sys.argv[1], sys.argv[2], int(sys.argv[3])
u0, u1, x0, x1, r0, r1 = (int(x) for x in sys.argv[4:])
r = json.load(open(res + "/lg.json")); n = r["requests"]
lu, ls = (float(x) for x in open(res + "/time").read().split())
us = lambda ticks: ticks * 1e6 / hz / n
print("%-9s %6d %7.0f %13.1f %13.1f %9.1f %8.1f%s" % (t, n, n / r["seconds"], us(x1 - x0), us(r1 - r0), us(u1 - u0),
      (lu + ls) * 1e6 / n, "" if r["errors"] == 0 else "  errors %d" % r["errors"]))
PY
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
