#!/usr/bin/env bash
# Proxy RSS after N decided 402s (issue 36: <= 64 MB after 100,000 on the bolt store). Run with the servers of
# bench-side-by-side.sh up: PG_SERVE=$PWD/bench-rss.sh ./bench-side-by-side.sh. Prints payguard's VmRSS idle
# (after the sanctions index is built), after every burst of loadgen -status 402 against GET /402 (plain HTTP,
# C workers), and after a second burst; the store's file size; goproxy's RSS for scale. N=100000 C=8 by default;
# PG_PPROF=host:port (a build with a pprof listener, not part of the repository) also saves heap profiles.
set -euo pipefail
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench}
cd "$BENCH_DIR"
N=${N:-100000} C=${C:-8} BURSTS=${BURSTS:-2}
pid_on() { ss -ltnpH "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }
PG=$(pid_on 19402) GP=$(pid_on 18081)
kb() { awk -v k="$2:" '$1==k{print $2}' "/proc/$1/status"; }
mb() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1024}'; }
RES=$(mktemp -d /tmp/pgrss.XXXXXX); trap 'rm -rf "$RES"' EXIT
heap() {
  [ -n "${PG_PPROF:-}" ] || return 0
  curl -fsS "http://$PG_PPROF/debug/pprof/heap" -o "/tmp/pgrss-heap-$1.pb.gz" && echo "  heap profile /tmp/pgrss-heap-$1.pb.gz"
  curl -fsS "http://$PG_PPROF/debug/pprof/heap?debug=1" | grep -E '^# (HeapAlloc|HeapSys|HeapInuse|HeapIdle|HeapReleased|Sys|NextGC|Stack|MSpan|GCSys|OtherSys) ' | tr '\n' ' '; echo
}
sleep "${SETTLE:-5}"
IDLE=$(kb "$PG" VmRSS)
echo "load $(cut -d' ' -f1-3 /proc/loadavg); payguard pid $PG idle VmRSS $(mb "$IDLE") MB (anonymous $(mb "$(kb "$PG" RssAnon)"), file-backed $(mb "$(kb "$PG" RssFile)")); goproxy $(mb "$(kb "$GP" VmRSS)") MB"
heap idle
for b in $(seq "$BURSTS"); do
  done_n=0
  while [ "$done_n" -lt "$N" ]; do
    bin/loadgen -url http://127.0.0.1:18080/402 -status 402 -c "$C" -d 5s -warmup 0s -proxy http://127.0.0.1:19402 >"$RES/l.json"
    done_n=$((done_n + $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["requests"]-r["errors"])' "$RES/l.json")))
  done
  sleep 2
  RSS=$(kb "$PG" VmRSS)
  echo "burst $b: $done_n decided 402s; VmRSS $(mb "$RSS") MB (idle + $(mb $((RSS - IDLE))) MB), VmHWM $(mb "$(kb "$PG" VmHWM)") MB;" \
    "anonymous $(mb "$(kb "$PG" RssAnon)") MB, file-backed $(mb "$(kb "$PG" RssFile)") MB;" \
    "store $(du -sh "${PG_DIR:-/tmp/pgbench}/payguard-data" 2>/dev/null | cut -f1); load $(cut -d' ' -f1-3 /proc/loadavg)"
  heap "burst$b"
done
