#!/usr/bin/env bash
# CPU, bytes and allocations per decided 402 (issue 36, goal 1), against bare goproxy's CPU per forwarded 402.
# Run with the servers of bench-side-by-side.sh up:
#   PROXY_BENCH=<proxy-bench checkout> PG_SERVE=$PWD/bench-402-cost.sh ./bench-side-by-side.sh
# loadgen -status 402 at C (default 8) for D (default 10s), plain HTTP, first through bare goproxy, then through
# payguard, ROUNDS times (default 2). Per 402: CPU time of the proxy's process (goproxy: /proc/<pid>/stat;
# payguard: process_cpu_seconds_total on its admin /metrics), and for payguard the bytes and allocations of
# its heap (go_memstats_alloc_bytes_total, go_memstats_mallocs_total) and its GC cycles. CPU per 402 is what
# bounds the rate at c=8 on two cores; unlike the rate it depends little on what else the machine runs.
# With a second payguard (bench-side-by-side.sh's PG2_STORE/PG2_BIN: another build, target payguard2) each
# round measures it too, the two payguards' order alternating between rounds (before/after in one run).
# "applier" is the part of payguard's CPU spent by the bolt store's applier (its thread, the one at nice 10 on
# Linux: the group commits, their page writes and fdatasyncs; 0 on another store).
set -euo pipefail
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench}
[ -d "$BENCH_DIR" ] || { cp -r "${PROXY_BENCH:?BENCH_DIR $BENCH_DIR does not exist: set PROXY_BENCH to a proxy-bench checkout}" "$BENCH_DIR"; chmod -R u+w "$BENCH_DIR"; }
cd "$BENCH_DIR"
C=${C:-8} D=${D:-10s} ROUNDS=${ROUNDS:-2}
ADMIN=${ADMIN:-127.0.0.1:19403}
RES=$(mktemp -d /tmp/pg402cost.XXXXXX); trap 'rm -rf "$RES"' EXIT
tick() { getconf CLK_TCK; }
pidof_port() { ss -ltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# The ticks of a process's threads at nice 10 (the bolt applier's; fields 14, 15 and 19 of the thread's stat).
applier_ticks() { cat /proc/"$1"/task/*/stat 2>/dev/null | sed 's/.*) //' | awk '$17==10 {t+=$12+$13} END {print t+0}'; }
metric() { curl -s "http://$ADMIN/metrics" | awk -v m="$1" '$1==m {printf "%.0f\n", $2}'; }
GP=$(pidof_port 18081)
# measure NAME PROXY_PORT ADMIN: one loadgen run through a payguard, its CPU, heap bytes, allocations, GCs.
measure() {
  local admin=$3 a0 m0 g0 c0 a1 m1 g1 c1 p0 p1 pid
  pid=$(pidof_port "$2")
  a0=$(ADMIN=$admin metric go_memstats_alloc_bytes_total) m0=$(ADMIN=$admin metric go_memstats_mallocs_total) g0=$(ADMIN=$admin metric go_gc_duration_seconds_count)
  c0=$(curl -s "http://$admin/metrics" | awk '$1=="process_cpu_seconds_total"{print $2}') p0=$(applier_ticks "$pid")
  bin/loadgen -url http://127.0.0.1:18080/402 -status 402 -c "$C" -d "$D" -proxy "http://127.0.0.1:$2" > "$RES/p.json"
  c1=$(curl -s "http://$admin/metrics" | awk '$1=="process_cpu_seconds_total"{print $2}') p1=$(applier_ticks "$pid")
  a1=$(ADMIN=$admin metric go_memstats_alloc_bytes_total) m1=$(ADMIN=$admin metric go_memstats_mallocs_total) g1=$(ADMIN=$admin metric go_gc_duration_seconds_count)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); n=r["requests"]; a=[float(x) for x in sys.argv[3:]]
print("%-9s %7d %8.0f %11.1f %6.0f %11.1f %4.0f %15.1f%s" % (sys.argv[2], n, n/r["seconds"], (a[1]-a[0])*1e6/n, (a[3]-a[2])/n, (a[5]-a[4])/n, a[7]-a[6], (a[9]-a[8])/a[10]*1e6/n, "" if r["errors"]==0 else "  errors %d" % r["errors"]))' \
    "$RES/p.json" "$1" "$c0" "$c1" "$a0" "$a1" "$m0" "$m1" "$g0" "$g1" "$p0" "$p1" "$(tick)"
}
echo "target     402s   402s/s  CPU µs/402  B/402  allocs/402  GCs  applier µs/402   (c=$C, $D, load $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq "$ROUNDS"); do
  t0=$(cpu_ticks "$GP")
  bin/loadgen -url http://127.0.0.1:18080/402 -status 402 -c "$C" -d "$D" -proxy http://127.0.0.1:18081 > "$RES/g.json"
  t1=$(cpu_ticks "$GP")
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); n=r["requests"]; print("goproxy  %7d %8.0f %11.1f" % (n, n/r["seconds"], (int(sys.argv[3])-int(sys.argv[2]))/int(sys.argv[4])*1e6/n))' "$RES/g.json" "$t0" "$t1" "$(tick)"
  if [ -z "${PG2:-}" ]; then measure payguard 19402 "$ADMIN"
  elif [ $((r % 2)) = 1 ]; then measure payguard 19402 "$ADMIN"; measure payguard2 19412 "${ADMIN2:-127.0.0.1:19413}"
  else measure payguard2 19412 "${ADMIN2:-127.0.0.1:19413}"; measure payguard 19402 "$ADMIN"; fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
