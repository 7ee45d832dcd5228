#!/usr/bin/env bash
# Two payguard builds' CPU per decided 402 side by side (issue 36), in many short alternated rounds: one long
# round each is at the mercy of what else the machine runs meanwhile. Run with the servers of
# bench-side-by-side.sh up, the second build as payguard2:
#   PROXY_BENCH=<proxy-bench checkout> PG_BIN=<before> PG2_STORE=bolt PG2_BIN=<after> \
#     PG_SERVE=$PWD/bench-402-pair.sh ./bench-side-by-side.sh
# Each round runs loadgen -status 402 at C (default 8) for D (default 4s) through bare goproxy, then payguard and
# payguard2 (their order swapped every round), ROUNDS times (default 10). Per target: its 402s, the CPU of its
# process (/proc/<pid>/stat) divided by them over all rounds and round by round, the allocations per 402 of
# the payguards (/metrics), and the median of the rounds' p50 and p99 (µs).
set -euo pipefail
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench}
cd "$BENCH_DIR"
D=${D:-4s} ROUNDS=${ROUNDS:-10} C=${C:-8}
RES=$(mktemp -d /tmp/pg402pair.XXXXXX); trap 'rm -rf "$RES"' EXIT
pidof_port() { ss -ltnp "sport = :$1" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2; }
GP=$(pidof_port 18081) P1=$(pidof_port 19402) P2=$(pidof_port 19412)
[ -n "$P2" ] || { echo "no payguard2 on 19412: set PG2_STORE (and PG2_BIN)" >&2; exit 1; }
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
mallocs() { curl -s "http://$1/metrics" | awk '$1=="go_memstats_mallocs_total" {printf "%.0f\n", $2}'; }
one() { # target port pid [admin]
  local t0 t1 m0=0 m1=0
  [ -n "${4:-}" ] && m0=$(mallocs "$4")
  t0=$(cpu "$3")
  bin/loadgen -url http://127.0.0.1:18080/402 -status 402 -c "$C" -d "$D" -proxy "http://127.0.0.1:$2" >"$RES/r.json"
  t1=$(cpu "$3")
  [ -n "${4:-}" ] && m1=$(mallocs "$4")
  python3 - "$1" "$RES/r.json" "$t0" "$t1" "$TCK" "$m0" "$m1" <<'PY'
import json, sys
name, f = sys.argv[1], sys.argv[2]
t0, t1, tck, m0, m1 = (int(x) for x in sys.argv[3:])
r = json.load(open(f))
h = r["hist_us"]; total = sum(k for _, k in h)
def pct(p):
    acc = 0
    for v, k in h:
        acc += k
        if acc >= p * total:
            return v
    return 0
print(name, r["requests"], (t1 - t0) / tck, pct(.5), pct(.99), m1 - m0, r["errors"])
PY
}
{
  echo "# c=$C, $D per target, $ROUNDS rounds; load before $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S) UTC"
  for r in $(seq "$ROUNDS"); do
    one goproxy 18081 "$GP"
    if [ $((r % 2)) = 1 ]; then
      one payguard 19402 "$P1" 127.0.0.1:19403; one payguard2 19412 "$P2" 127.0.0.1:19413
    else
      one payguard2 19412 "$P2" 127.0.0.1:19413; one payguard 19402 "$P1" 127.0.0.1:19403
    fi
  done
  echo "# load after $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S) UTC"
} | python3 -c '
import sys, statistics
rows = {}
for line in sys.stdin:
    print(line.rstrip(), flush=True)
    if line.startswith("#"):
        continue
    name, n, cpu, p50, p99, mallocs, errors = line.split()
    rows.setdefault(name, []).append((int(n), float(cpu), int(p50), int(p99), int(mallocs), int(errors)))
print("target      402s  CPU µs/402  allocs/402  p50  p99 (medians)  errors  CPU µs/402 by round")
for name in ("goproxy", "payguard", "payguard2"):
    rs = rows.get(name, [])
    if not rs:
        continue
    n = sum(r[0] for r in rs); cpu = sum(r[1] for r in rs); m = sum(r[4] for r in rs)
    print("%-9s %7d %10.1f %11s %5d %5d %14d  %s" % (name, n, cpu * 1e6 / n, "%.1f" % (m / n) if m else "-",
          statistics.median(r[2] for r in rs), statistics.median(r[3] for r in rs), sum(r[5] for r in rs),
          " ".join("%.0f" % (r[1] * 1e6 / r[0]) for r in rs)))
'
