#!/usr/bin/env bash
# An agent paying x402 sellers through payguard, all on 127.0.0.1 (no chain, no internet):
#   facilitator (offline, checks signatures)  ◀── sellers (official @x402/express and x402-express)
#   buyer (official @x402/fetch / x402-fetch) ──▶ payguard proxy :8402 ──▶ sellers
# It shows an allow (paid once), a block ($5 > $1 max), and a hold approved through the admin API.
#
#   examples/agent-through-proxy/run.sh            # from anywhere; needs go and node >= 20.18
#   SANCTIONS_DIR=/path/to/ofac-csv examples/agent-through-proxy/run.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${WORK:-$(mktemp -d -t payguard-example-XXXXXX)}"
SANCTIONS_DIR="${SANCTIONS_DIR:-$ROOT/screening/sanctions/testdata/basic}"
export PAYGUARD_ADMIN_TOKEN="${PAYGUARD_ADMIN_TOKEN:-example-admin-token-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')}"
PROXY=http://127.0.0.1:8402 ADMIN=http://127.0.0.1:8403
FAC_PORT=4020 V2_PORT=4021 V1_PORT=4022

need() { command -v "$1" >/dev/null || { echo "run.sh: $1 is required" >&2; exit 1; }; }
need go; need node; need curl
if [ ! -d "$ROOT/interop/node_modules/@x402/fetch" ]; then
  echo "== installing the official x402 packages (npm ci in interop/)"
  (cd "$ROOT/interop" && npm ci --no-audit --no-fund)
fi

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in $FAC_PORT $V2_PORT $V1_PORT 8402 8403; do
  if port_busy $port; then echo "run.sh: 127.0.0.1:$port is already in use (another payguard or example?); stop it first" >&2; exit 1; fi
done
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "run.sh: nothing listening on 127.0.0.1:$1; logs in $WORK" >&2; exit 1; }

echo "== building payguard (work dir $WORK)"
(cd "$ROOT" && go build -o "$WORK/payguard" ./cmd/payguard)

echo "== starting the facilitator and two sellers (v2 on :$V2_PORT, v1 on :$V1_PORT)"
node "$ROOT/interop/lib/facilitator.mjs" --port $FAC_PORT >"$WORK/facilitator.log" 2>&1 & PIDS+=($!)
wait_port $FAC_PORT
node "$ROOT/interop/lib/seller-v2.mjs" --port $V2_PORT --facilitator http://127.0.0.1:$FAC_PORT >"$WORK/seller-v2.log" 2>&1 & PIDS+=($!)
node "$ROOT/interop/lib/seller-v1.mjs" --port $V1_PORT --facilitator http://127.0.0.1:$FAC_PORT >"$WORK/seller-v1.log" 2>&1 & PIDS+=($!)
wait_port $V2_PORT; wait_port $V1_PORT

echo "== starting payguard proxy (sanctions list: $SANCTIONS_DIR)"
cp "$HERE/payguard.yaml" "$WORK/payguard.yaml"
(cd "$WORK" && exec ./payguard proxy --config payguard.yaml --offline --sanctions-dir "$SANCTIONS_DIR") >"$WORK/payguard.log" 2>&1 & PIDS+=($!)
wait_port 8402; wait_port 8403
CA="$WORK/payguard-data/ca/payguard-ca.pem"

buy() { # buy URL [VERSION] -> prints status, payguard headers and body
  node "$ROOT/interop/lib/buyer.mjs" --url "$1" --version "${2:-2}" --proxy $PROXY --ca "$CA" >"$WORK/last.json" || true
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const h = r.headers || {};
    const pick = (k) => h[k] ?? h[k.toLowerCase()];
    console.log(`   status ${r.status}  decision=${pick("x-payguard-decision") ?? "-"}  receipt=${pick("x-payguard-receipt") ?? "-"}  hold=${pick("x-payguard-hold") ?? "-"}`);
    console.log("   body   " + JSON.stringify(r.body).slice(0, 300));' "$WORK/last.json"
}
admin() { curl -s -H "Authorization: Bearer $PAYGUARD_ADMIN_TOKEN" "$@"; }
# brief: one line per hold (or the hold) instead of the full JSON with the signed decision.
brief() { node -e '
  const v = JSON.parse(require("fs").readFileSync(0, "utf8"));
  for (const h of v.holds ?? [v]) console.log(`   ${h.id}  ${h.status}  $${h.amount_usd}  ${h.method} ${h.url}` +
    (h.resolved_by ? `  by ${h.resolved_by}${h.note ? ` ("${h.note}")` : ""}` : `  ${(h.decision?.reasons ?? []).join("; ")}`));'; }

echo; echo "== 1. allow: \$0.01 from the v2 seller (paid once, settlement committed)"
buy http://127.0.0.1:$V2_PORT/cheap 2
echo; echo "== 2. allow: \$0.01 from the v1 seller with the v1 client"
buy http://127.0.0.1:$V1_PORT/cheap 1
echo; echo "== 3. block: \$5 is over max_per_payment_usd (the agent never sees a challenge to sign)"
buy http://127.0.0.1:$V2_PORT/pricey 2
echo; echo "== 4. hold: \$0.50 is over hold_above_usd; a person approves it through the admin API"
buy http://127.0.0.1:$V2_PORT/mid 2
HOLD=$(node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const h=r.headers||{};console.log(h["x-payguard-hold"]||"")' "$WORK/last.json")
echo "   pending holds (GET /v1/holds?status=pending):"; admin "$ADMIN/v1/holds?status=pending" | brief
echo "   approving it (POST /v1/holds/$HOLD/approve):"
admin -X POST -d '{"by":"alice","note":"known vendor"}' "$ADMIN/v1/holds/$HOLD/approve" | brief
echo "   the agent retries:"
buy http://127.0.0.1:$V2_PORT/mid 2
echo; echo "== today's budget"
admin "$ADMIN/v1/budget"
echo; echo "== payguard's decision log (one JSON line per decision)"
grep '"msg":"decision"' "$WORK/payguard.log" | cut -c1-400
echo; echo "logs and state: $WORK"
