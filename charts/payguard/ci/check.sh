#!/usr/bin/env bash
# Renders the chart with helm and checks what payguard will actually read: the ConfigMap's payguard.yaml
# passes `payguard config validate`, and `payguard proxy` starts with the rendered configuration and the
# chart-generated CA and token (paths moved into a temp dir), answers /healthz, refuses the API without the
# token, and MITMs HTTPS with a leaf that verifies against the rendered CA certificate.
#
#   charts/payguard/ci/check.sh            # needs helm (v3), go, curl, python3; run from anywhere
#   HELM=/path/to/helm PAYGUARD=/path/to/payguard charts/payguard/ci/check.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
HELM="${HELM:-helm}"
WORK="$(mktemp -d -t payguard-chart-XXXXXX)"
trap 'kill ${PID:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ -z "${PAYGUARD:-}" ]; then (cd "$ROOT" && go build -o "$WORK/payguard" ./cmd/payguard); PAYGUARD="$WORK/payguard"; fi

"$HELM" lint --strict "$HERE" --set example.enabled=true
for set in "" "--set sidecar.native=false" "--set persistence.enabled=true" \
  "--set store.driver=redis --set store.redis.urlSecret=redis-url --set example.replicas=2" \
  "--set ca.existingSecret=my-ca --set admin.token.existingSecret=my-token --set receiptKeys.existingSecret=my-keys"; do
  # shellcheck disable=SC2086
  "$HELM" template t "$HERE" --set example.enabled=true $set >"$WORK/render.yaml"
  echo "rendered: ${set:-defaults} ($(grep -c '^kind:' "$WORK/render.yaml") objects)"
done
if "$HELM" template t "$HERE" --set example.enabled=true --set example.replicas=2 >/dev/null 2>&1; then
  echo "check.sh: two replicas on bolt (two separate daily caps) rendered; it must fail" >&2; exit 1
fi

# As a dependency: a parent chart puts the sidecar into its own pod with the named templates, and the names
# they use are the ConfigMap and Secrets the dependency renders.
mkdir -p "$WORK/parent/charts" && cp -r "$HERE/ci/parent/." "$WORK/parent/" && cp -r "$HERE" "$WORK/parent/charts/payguard"
"$HELM" template rel "$WORK/parent" >"$WORK/parent.yaml"
for want in "name: rel-payguard$" "secretName: rel-payguard-ca$" "secretName: rel-payguard-admin$" "restartPolicy: Always" "daily_cap_usd: 5$"; do
  test "$(grep -c -- "$want" "$WORK/parent.yaml")" -ge 1 || { echo "parent render lacks '$want'" >&2; exit 1; }
done
for obj in "kind: ConfigMap" "kind: Secret"; do grep -q "^$obj" "$WORK/parent.yaml" || { echo "parent render lacks $obj" >&2; exit 1; }; done
echo "rendered: as a dependency of a parent chart"

# The default render, taken apart into files payguard reads.
P1=$((20000 + RANDOM % 20000)); P2=$((P1 + 1))
"$HELM" template t "$HERE" --set proxy.port=$P1 --set admin.port=$P2 --set admin.token.value=chart-check-token-0123456789 >"$WORK/render.yaml"
python3 - "$WORK" <<'PY'
import base64, os, sys, yaml
work = sys.argv[1]
for doc in yaml.safe_load_all(open(os.path.join(work, "render.yaml"))):
    if not doc: continue
    name = doc["metadata"]["name"]
    if doc["kind"] == "ConfigMap":
        text = doc["data"]["payguard.yaml"]
        for old, new in [("/etc/payguard", work + "/etc"), ('"/data', '"' + work + "/data")]:
            text = text.replace(old, new)
        text = text.replace('"0.0.0.0:', '"127.0.0.1:')
        open(os.path.join(work, "payguard.yaml"), "w").write(text)
    elif doc["kind"] == "Secret":
        sub = "ca" if name.endswith("-ca") else "admin"
        os.makedirs(os.path.join(work, "etc", sub), exist_ok=True)
        for k, v in doc["data"].items():
            open(os.path.join(work, "etc", sub, k), "wb").write(base64.b64decode(v))
PY
mkdir -p "$WORK/data"
"$PAYGUARD" config validate "$WORK/payguard.yaml"
(cd "$WORK" && exec "$PAYGUARD" proxy --config "$WORK/payguard.yaml" --offline >"$WORK/banner.txt" 2>"$WORK/payguard.log") & PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$P2/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$P2/healthz" >/dev/null || { cat "$WORK/payguard.log" >&2; exit 1; }
test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/v1/holds")" = 401
test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer chart-check-token-0123456789' "http://127.0.0.1:$P2/v1/budget")" = 200
# A CONNECT through the proxy: the agent's TLS handshake must verify payguard's leaf against the rendered CA.
# The upstream (a closed port) then fails, which payguard answers with 502 inside the tunnel.
code=$(curl -s -o /dev/null -w '%{http_code}' --proxy "http://127.0.0.1:$P1" --cacert "$WORK/etc/ca/tls.crt" \
  "https://127.0.0.1:9/" || true)
test "$code" = 502 || { echo "MITM through the rendered CA: got $code, want 502" >&2; exit 1; }
echo "chart check passed (helm $("$HELM" version --short 2>/dev/null || true))"
