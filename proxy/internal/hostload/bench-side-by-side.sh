#!/usr/bin/env bash
# payguard side by side with bare goproxy (proxy-bench's servers and driver), payguard started once the
# upstream's CA exists (payguard reads upstream_ca_files at start). mitmproxy is left out.
#   PG_BIN=/path/to/payguard ./bench-side-by-side.sh [bench flags]          # pass-through table
#   PG_SERVE=$PWD/bench-402.sh ./bench-side-by-side.sh                      # 402 interception (loadgen -status 402)
#   PG_STORE=memory ...                                                     # store driver (default bolt)
#   PG_STORE=redis [PG_REDIS=host:port] ...                                 # Redis (default 127.0.0.1:6379), a fresh key prefix
#   PG2_STORE=memory ...                                                    # and a second payguard (target payguard2) on another store
#   PG2_STORE=redis ...                                                     # ... Redis too, on its own key prefix
#   PG2_STORE=bolt PG2_BIN=/path/to/other ...                               # ... or another build (or a wrapper setting its env)
#   PG_INDEX=every PG2_STORE=bolt PG2_INDEX=off ...                         # Endpoint Index writing every 402 against none
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
# proxy-bench (tools/proxy-bench, not part of this repository) is copied from PROXY_BENCH to BENCH_DIR (it writes
# bin/ and out/); with neither, the script says so and stops.
BENCH_DIR=${BENCH_DIR:-/tmp/proxy-bench}
[ -d "$BENCH_DIR" ] || { cp -r "${PROXY_BENCH:?BENCH_DIR $BENCH_DIR does not exist: set PROXY_BENCH to a proxy-bench checkout}" "$BENCH_DIR"; chmod -R u+w "$BENCH_DIR"; }
cd "$BENCH_DIR"
PG_BIN=${PG_BIN:-/tmp/pgbin/payguard}
PG_DIR=${PG_DIR:-/tmp/pgbench}
# The list: SANCTIONS when set, else the repository's copy of OFAC's 2024-05-03 sdn.csv, decompressed.
if [ -z "${SANCTIONS:-}" ]; then
  SANCTIONS=$BENCH_DIR/out/sdn
  mkdir -p "$SANCTIONS"
  gzip -dc "$REPO/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz" >"$SANCTIONS/sdn.csv"
fi
go build -o bin/ ./cmd/...
mkdir -p out
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
start() { local log="out/$1.log"; shift; "$@" >"$log" 2>&1 & PIDS+=($!); }
# The ports are fixed: another run on the machine (another checkout's bench) would answer on them, and this
# run would measure its servers. Refuse to start while any of them is taken.
for port in 18080 18443 18081 18082 19402 19403 ${PG2_STORE:+19412 19413}; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "127.0.0.1:$port is in use (another bench run?): wait for it to end" >&2; exit 1
  fi
done
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing on $1" >&2; exit 1; }
start upstream bin/upstream -http 127.0.0.1:18080 -https 127.0.0.1:18443 -ca-out out/upstream-ca.pem
wait_port 127.0.0.1:18080; wait_port 127.0.0.1:18443
start goproxy-http bin/goproxy-bare -mode http -listen 127.0.0.1:18081 -max-idle-per-host 256
start goproxy-mitm bin/goproxy-bare -mode mitm -listen 127.0.0.1:18082 -max-idle-per-host 256 \
  -ca-out out/goproxy-ca.pem -upstream-ca out/upstream-ca.pem
# PG_INDEX / PG2_INDEX: the Endpoint Index's observation writing: on (the default: every 402 observed, repeats
# coalesced for an hour), every (coalesce 0s: every 402 written to the store), off (observe: false).
index_yaml() {
  case "${1:-on}" in
    off) printf 'index:\n  observe: false\n' ;;
    every) printf 'index:\n  coalesce: 0s\n' ;;
  esac
}
# A bench's throwaway prefix: a Redis that keeps nothing across a restart (a development one) is accepted and
# the new prefix's ledger is created at start.
REDIS_BENCH_FLAGS='allow_volatile: true, init_if_empty: true'
rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"
cat >"$PG_DIR/payguard.yaml" <<YAML
data_dir: $PG_DIR/payguard-data
proxy:
  listen: 127.0.0.1:19402
  ca_cert_file: $PG_DIR/payguard-data/ca/payguard-ca.pem
  ca_key_file: $PG_DIR/payguard-data/ca/payguard-ca-key.pem
  upstream_ca_files: [$PWD/out/upstream-ca.pem]
  hold_wait: 0s
  # Every bench 402 stays unpaid: the per-site bound (default 1,000) would refuse all but the first ones.
  max_unpaid_per_site: 1000000
admin:
  listen: 127.0.0.1:19403
store:
  driver: ${PG_STORE:-bolt}
$(if [ "${PG_STORE:-bolt}" = redis ]; then printf '  redis: {addr: "%s", prefix: "pgbench-%s:", %s}' "${PG_REDIS:-127.0.0.1:6379}" "$$" "$REDIS_BENCH_FLAGS"
  else printf '  path: %s' "$PG_DIR/payguard-data/payguard.db"; fi)
keys:
  receipt_key_file: $PG_DIR/payguard-data/receipt-keys.json
rules:
  allowed_networks: ["eip155:84532"]
  daily_cap_usd: 1000000000
$(index_yaml "${PG_INDEX:-on}")
YAML
start payguard "$PG_BIN" proxy --config "$PG_DIR/payguard.yaml" --offline --sanctions-dir "$SANCTIONS"
wait_port 127.0.0.1:18081; wait_port 127.0.0.1:18082; wait_port 127.0.0.1:19402
if [ -n "${PG2_STORE:-}" ]; then
  # A second payguard with another store driver (memory or bolt), same CA and keys, on 19412/19413: bench-402.sh
  # then measures it as target payguard2, interleaved with the first.
  # Its own data directory (one process per data directory), the first one's CA and receipt key.
  sed -e 's/127.0.0.1:19402/127.0.0.1:19412/; s/127.0.0.1:19403/127.0.0.1:19413/' \
      -e "s#^data_dir: .*#data_dir: $PG_DIR/payguard2-data#" \
      -e "s#^  driver: .*#  driver: $PG2_STORE#" -e "s#^  path: .*#  path: $PG_DIR/payguard2-data/payguard.db#" \
      -e '/^  redis: /d' -e '/^index:/d' -e '/^  observe: /d' -e '/^  coalesce: /d' "$PG_DIR/payguard.yaml" > "$PG_DIR/payguard2.yaml"
  index_yaml "${PG2_INDEX:-on}" >> "$PG_DIR/payguard2.yaml"
  if [ "$PG2_STORE" = redis ]; then
    # Its own key prefix: the two payguards share no ledger or Index (a fleet is not what is measured here).
    sed -i -e '/^  path: /d' -e "s#^  driver: .*#&\n  redis: {addr: \"${PG_REDIS:-127.0.0.1:6379}\", prefix: \"pgbench2-$$:\", $REDIS_BENCH_FLAGS}#" "$PG_DIR/payguard2.yaml"
  else
    grep -q '^  path:' "$PG_DIR/payguard2.yaml" || sed -i "s#^  driver: .*#&\n  path: $PG_DIR/payguard2-data/payguard.db#" "$PG_DIR/payguard2.yaml"
  fi
  start payguard2 "${PG2_BIN:-$PG_BIN}" proxy --config "$PG_DIR/payguard2.yaml" --offline --sanctions-dir "$SANCTIONS"
  wait_port 127.0.0.1:19412
  export PG2=1
fi
export PGCA=$PG_DIR/payguard-data/ca/payguard-ca.pem
if [ -n "${PG_SERVE:-}" ]; then echo serving; "$PG_SERVE"; exit; fi
echo "cores: $(nproc); $(go version | cut -d' ' -f3); $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2); load: $(cut -d' ' -f1-3 /proc/loadavg)"
bin/bench -upstream-http 127.0.0.1:18080 -upstream-https 127.0.0.1:18443 -upstream-ca out/upstream-ca.pem \
  -http "goproxy=127.0.0.1:18081,payguard=127.0.0.1:19402" \
  -https "goproxy=127.0.0.1:18082@out/goproxy-ca.pem,payguard=127.0.0.1:19402@$PG_DIR/payguard-data/ca/payguard-ca.pem" \
  -json out/results.json "$@" 2>out/bench-progress.log | tee out/table.txt
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -c '"msg":"decision"' out/payguard.log || true
