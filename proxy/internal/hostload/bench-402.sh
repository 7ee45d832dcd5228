#!/usr/bin/env bash
# 402 interception latency: loadgen -status 402 against GET /402, direct / bare goproxy / payguard,
# plain HTTP and MITM'd HTTPS, c=1 and c=32, ROUNDS interleaved slices of SLICE each. Run with the servers of
# bench-side-by-side.sh up: PG_SERVE=$PWD/bench-402.sh ./bench-side-by-side.sh. CS="1" runs only the c=1 cells.
# With bench-side-by-side.sh's PG2_STORE, a second payguard (another store) is target payguard2.
set -euo pipefail
# proxy-bench (tools/proxy-bench, not part of this repository) is copied from PROXY_BENCH to BENCH_DIR (it writes
# bin/ and out/); with neither, the script says so and stops.
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench}
[ -d "$BENCH_DIR" ] || { cp -r "${PROXY_BENCH:?BENCH_DIR $BENCH_DIR does not exist: set PROXY_BENCH to a proxy-bench checkout}" "$BENCH_DIR"; chmod -R u+w "$BENCH_DIR"; }
cd "$BENCH_DIR"
ROUNDS=${ROUNDS:-3} SLICE=${SLICE:-4s}
PGCA=${PGCA:-/tmp/pgbench/payguard-data/ca/payguard-ca.pem}
TARGETS="direct goproxy payguard${PG2:+ payguard2}"
# Each run's loadgen results in a directory of its own (another run on the machine does not mix in).
RES=$(mktemp -d /tmp/pg402.XXXXXX); trap 'rm -rf "$RES"' EXIT
pct() { python3 -c '
import json,sys
tot=[0,0,0.0]; hist={}
for f in sys.argv[1:]:
    r=json.load(open(f)); tot[0]+=r["requests"]; tot[1]+=r["errors"]; tot[2]+=r["seconds"]
    for us,n in r["hist_us"]: hist[us]=hist.get(us,0)+n
keys=sorted(hist); n=sum(hist.values())
def p(q):
    c=0
    for k in keys:
        c+=hist[k]
        if c>=q*n: return k
    return 0
print("%6d %6d %7d %9.0f %7d" % (p(.5), p(.9), p(.99), tot[0]/tot[2] if tot[2] else 0, tot[1]))
' "$@"; }
echo "proto   c target       p50    p90     p99     req/s  errors   (µs; load $(cut -d' ' -f1-3 /proc/loadavg))"
for proto in http https; do
  for c in ${CS:-1 32}; do
    rm -f "$RES"/*.json
    for r in $(seq $ROUNDS); do
      for t in $TARGETS; do
        if [ $proto = http ]; then url=http://127.0.0.1:18080/402; else url=https://127.0.0.1:18443/402; fi
        case $t in
          direct) args=(-ca out/upstream-ca.pem) ;;
          goproxy) if [ $proto = http ]; then args=(-proxy http://127.0.0.1:18081); else args=(-proxy http://127.0.0.1:18082 -ca out/goproxy-ca.pem); fi ;;
          payguard) args=(-proxy http://127.0.0.1:19402 -ca "$PGCA") ;;
          payguard2) args=(-proxy http://127.0.0.1:19412 -ca "$PGCA") ;;
        esac
        bin/loadgen -url $url -status 402 -c $c -d $SLICE "${args[@]}" > "$RES/$t-$r.json"
      done
    done
    for t in $TARGETS; do printf "%-5s %3d %-9s " $proto $c $t; pct "$RES"/$t-*.json; done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
