#!/usr/bin/env bash
# Pass-through (issue 36, goal 2): payguard against bare goproxy forwarding GET /ok (200-byte JSON) over plain
# HTTP, interleaved slice by slice, on ports of its own. For each client (wrk -t1, loadgen) and concurrency it
# prints each proxy's req/s, loadgen's p50/p99, and the proxy process's own CPU per request (utime + stime
# from /proc over the slice: a figure the machine's load moves far less than req/s), then payguard/goproxy.
#   PROXY_BENCH=<proxy-bench checkout> PG_BIN=/path/to/payguard proxy/internal/hostload/bench-passthrough.sh
#   CS="1 32" ROUNDS=3 SLICE=4 CLIENTS="wrk loadgen" PORT=29500 ...   # the defaults
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench-pt}
[ -d "$BENCH_DIR" ] || { cp -r "${PROXY_BENCH:?BENCH_DIR $BENCH_DIR does not exist: set PROXY_BENCH to a proxy-bench checkout}" "$BENCH_DIR"; chmod -R u+w "$BENCH_DIR"; }
cd "$BENCH_DIR"
PG_BIN=${PG_BIN:-/tmp/pgbin/payguard} PG_DIR=${PG_DIR:-/tmp/pgbench-pt}
CS=${CS:-1 32} ROUNDS=${ROUNDS:-3} SLICE=${SLICE:-4} CLIENTS=${CLIENTS:-wrk loadgen} PORT=${PORT:-29500}
UP=127.0.0.1:$PORT UPS=127.0.0.1:$((PORT + 1)) GP=127.0.0.1:$((PORT + 2)) PGL=127.0.0.1:$((PORT + 3)) PGA=127.0.0.1:$((PORT + 4))
command -v wrk >/dev/null || CLIENTS=${CLIENTS//wrk/}
go build -o bin/ ./cmd/upstream ./cmd/loadgen ./cmd/goproxy-bare
mkdir -p out/sdn
gzip -dc "$REPO/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz" >out/sdn/sdn.csv
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_port() { for _ in $(seq 600); do (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing on $1" >&2; exit 1; }
for a in $UP $UPS $GP $PGL $PGA; do
  if (exec 3<>"/dev/tcp/${a%:*}/${a#*:}") 2>/dev/null; then echo "$a is taken: set PORT" >&2; exit 1; fi
done
bin/upstream -http "$UP" -https "$UPS" -ca-out out/upstream-ca.pem >out/pt-upstream.log 2>&1 & PIDS+=($!)
wait_port "$UP"
bin/goproxy-bare -mode http -listen "$GP" -max-idle-per-host 256 >out/pt-goproxy.log 2>&1 & GPID=$!; PIDS+=($GPID)
rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"
cat >"$PG_DIR/payguard.yaml" <<YAML
proxy:
  listen: $PGL
  data_dir: $PG_DIR/data
  ca_cert_file: $PG_DIR/data/ca/payguard-ca.pem
  ca_key_file: $PG_DIR/data/ca/payguard-ca-key.pem
  upstream_ca_files: [$PWD/out/upstream-ca.pem]
admin:
  listen: $PGA
store:
  driver: bolt
  path: $PG_DIR/data/payguard.db
keys:
  receipt_key_file: $PG_DIR/data/receipt-keys.json
rules:
  allowed_networks: ["eip155:84532"]
YAML
"$PG_BIN" proxy --config "$PG_DIR/payguard.yaml" --offline --sanctions-dir out/sdn >out/pt-payguard.log 2>&1 & PGID=$!; PIDS+=($PGID)
wait_port "$GP"; wait_port "$PGL"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
RES=$(mktemp -d /tmp/pgpt.XXXXXX); trap 'cleanup; rm -rf "$RES"' EXIT
slice() { # client c target addr pid -> one JSON line in $RES
  local client=$1 c=$2 t=$3 addr=$4 pid=$5 t0 t1
  t0=$(ticks "$pid")
  if [ "$client" = wrk ]; then
    wrk -t1 -c"$c" -d"${SLICE}s" -s wrk.lua "http://$addr" -- "http://$UP/ok" | grep '^{' >"$RES/cur.json"
  else
    bin/loadgen -url "http://$UP/ok" -c "$c" -d "${SLICE}s" -proxy "http://$addr" >"$RES/cur.json"
  fi
  t1=$(ticks "$pid")
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["cpu_s"]=(int(sys.argv[2])-int(sys.argv[3]))/int(sys.argv[4]); print(json.dumps(r))' \
    "$RES/cur.json" "$t1" "$t0" "$HZ" >>"$RES/$client-$c-$t.jsonl"
}
summary() { python3 - "$@" <<'PY'
import json,sys
def load(f):
    rs=[json.loads(l) for l in open(f)]
    req=sum(r["requests"] for r in rs); sec=sum(r["seconds"] for r in rs); cpu=sum(r["cpu_s"] for r in rs)
    hist={}
    for r in rs:
        for us,n in r["hist_us"]: hist[us]=hist.get(us,0)+n
    keys=sorted(hist); n=sum(hist.values())
    def p(q):
        c=0
        for k in keys:
            c+=hist[k]
            if c>=q*n: return k
        return 0
    return req/sec, p(.5), p(.99), 1e6*cpu/max(req,1), sum(r["errors"] for r in rs)
client,c,gp,pg=sys.argv[1:5]
g=load(gp); q=load(pg)
for name,r in (("goproxy",g),("payguard",q)):
    print("%-7s %3s %-9s %9.0f %7d %8d %9.1f %6d" % (client,c,name,r[0],r[1],r[2],r[3],r[4]))
print("%-7s %3s %-9s %8.2fx %6.2fx %7.2fx %8.2fx" % (client,c,"ratio",q[0]/g[0],q[1]/max(g[1],1),q[2]/max(g[2],1),q[3]/max(g[3],1e-9)))
PY
}
echo "client    c target        req/s  p50 µs   p99 µs  CPU µs/req errors   (load $(cut -d' ' -f1-3 /proc/loadavg))"
for client in $CLIENTS; do
  for c in $CS; do
    for r in $(seq "$ROUNDS"); do
      if [ $((r % 2)) = 1 ]; then order="goproxy payguard"; else order="payguard goproxy"; fi
      for t in $order; do
        if [ $t = goproxy ]; then slice "$client" "$c" $t "$GP" "$GPID"; else slice "$client" "$c" $t "$PGL" "$PGID"; fi
      done
    done
    summary "$client" "$c" "$RES/$client-$c-goproxy.jsonl" "$RES/$client-$c-payguard.jsonl"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
