#!/usr/bin/env bash
# The chart's checks, with no cluster, no network and no helm binary (Helm's own libraries do the work, in the
# Go module under ci/render; the first run downloads it and ci/kube127's k8s.io/api v0.27 through the Go module
# proxy, like any Go dependency; with those in the module cache it runs with GOPROXY=off):
#   1. ci/render's tests: every documented values combination rendered for Kubernetes 1.27 and 1.31 with the
#      values schema applied as `helm install` applies it, every object decoded strictly into k8s.io/api
#      v0.31 (in process) and v0.27 (ci/kube127), invariants (non-root, read-only, resources, labels, kept
#      Secrets, NetworkPolicy, sidecar by version), typo'd values refused, `helm lint --strict` (Helm's linter),
#      the CA and token kept across an upgrade.
#   2. values.schema.json is what the config types say (internal/chartschema's drift test).
#   3. What payguard will actually read: the ConfigMap's payguard.yaml passes `payguard config validate`, and
#      `payguard proxy` starts with the rendered configuration and the chart-generated CA and token (paths
#      moved into a temp dir), answers /healthz, refuses the API without the token, and MITMs HTTPS with a
#      leaf that verifies against the rendered CA certificate; ready at once on the image's OFAC snapshot
#      (seed_dir), /ca.pem, admin.hosts, and every metric the rendered PrometheusRule uses present in the
#      running proxy's /metrics; the fleet's and serve's configurations validate.
#
#   charts/payguard/ci/check.sh            # needs go alone; run from anywhere
#   PAYGUARD=/path/to/payguard charts/payguard/ci/check.sh
# With a helm binary on PATH (HELM=...), `helm lint --strict` runs too.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$(mktemp -d -t payguard-chart-XXXXXX)"
trap 'kill ${PID:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ -z "${PAYGUARD:-}" ]; then (cd "$ROOT" && go build -o "$WORK/payguard" ./cmd/payguard); PAYGUARD="$WORK/payguard"; fi

(cd "$HERE/ci/render" && go test -count=1 ./...)
(cd "$ROOT" && go test -count=1 ./internal/chartschema/)
(cd "$HERE/ci/render" && go build -o "$WORK/template" ./cmd/template && go build -o "$WORK/chartcheck" ./cmd/chartcheck)
template() { "$WORK/template" "$@" "$HERE"; }
HELM="${HELM:-helm}"
if command -v "$HELM" >/dev/null 2>&1; then "$HELM" lint --strict "$HERE" --set example.enabled=true; fi

# The fleet's and serve's configurations are accepted by the binary.
for mode in "proxyFleet.enabled=true" "serve.enabled=true --set serve.server.fees.pay_to=0x1111111111111111111111111111111111111111 --set serve.server.contact=mailto:ops@example.com --set serve.server.fees.facilitator_url=https://facilitator.example.com"; do
  # shellcheck disable=SC2086
  template --set store.driver=redis --set store.redis.urlSecret=r --set receiptKeys.existingSecret=k --set $mode >"$WORK/mode.yaml"
  "$WORK/chartcheck" config "$WORK/mode.yaml" "$WORK/mode-config.yaml"
  PAYGUARD_REDIS_URL=redis://127.0.0.1:6379/0 "$PAYGUARD" config validate "$WORK/mode-config.yaml"
  echo "validated: the ${mode%% *} configuration"
done

# As a dependency: a parent chart puts the sidecar into its own pod with the named templates, and the names
# they use are the ConfigMap and Secrets the dependency renders.
mkdir -p "$WORK/parent/charts" && cp -r "$HERE/ci/parent/." "$WORK/parent/" && cp -r "$HERE" "$WORK/parent/charts/payguard"
"$WORK/template" --name rel "$WORK/parent" >"$WORK/parent.yaml"
for want in "name: rel-payguard$" "secretName: rel-payguard-ca$" "secretName: rel-payguard-admin$" "restartPolicy: Always" "daily_cap_usd: 5$"; do
  test "$(grep -c -- "$want" "$WORK/parent.yaml")" -ge 1 || { echo "parent render lacks '$want'" >&2; exit 1; }
done
for obj in "kind: ConfigMap" "kind: Secret"; do grep -q "^$obj" "$WORK/parent.yaml" || { echo "parent render lacks $obj" >&2; exit 1; }; done
"$WORK/template" --name rel --kube-version v1.27.16 "$WORK/parent" >"$WORK/parent127.yaml"
if grep -q "restartPolicy: Always" "$WORK/parent127.yaml"; then echo "parent render on 1.27 has a native sidecar" >&2; exit 1; fi
echo "rendered: as a dependency of a parent chart (native sidecar on 1.31, a regular container on 1.27)"

# The default render, taken apart into files payguard reads.
P1=$((20000 + RANDOM % 20000)); P2=$((P1 + 1))
ADMIN_HOST=t-payguard-admin.agents.svc
template --set proxy.port=$P1 --set admin.port=$P2 --set admin.token.value=chart-check-token-0123456789 \
  --set "admin.hosts[0]=$ADMIN_HOST" --set prometheusRule.enabled=true >"$WORK/render.yaml"
"$WORK/chartcheck" unpack "$WORK/render.yaml" "$WORK"
mkdir -p "$WORK/data"
# The OFAC snapshot the image ships at seed_dir (unpack moved the path into $WORK), built as the Dockerfile builds it.
"$ROOT/docker/sanctions-snapshot.sh" "$WORK/snapshot"
"$PAYGUARD" config validate "$WORK/payguard.yaml"
(cd "$WORK" && exec "$PAYGUARD" proxy --config "$WORK/payguard.yaml" --offline >"$WORK/banner.txt" 2>"$WORK/payguard.log") & PID=$!
# The admin listener answers /healthz, refuses the API without the token and serves it with the token; a
# CONNECT through the proxy must verify payguard's leaf against the rendered CA (the upstream, a closed port,
# then fails, which payguard answers with 502 inside the tunnel).
# With the image's snapshot and an empty cache, offline, it is ready at once (the snapshot's data_as_of in
# /readyz), serves the CA at /ca.pem, answers admin.hosts' name (421 for another), and has every metric the
# rendered alerts use.
"$WORK/chartcheck" live "127.0.0.1:$P1" "127.0.0.1:$P2" chart-check-token-0123456789 "$WORK/etc/ca/tls.crt" "$ADMIN_HOST" "$WORK/render.yaml" ||
  { cat "$WORK/payguard.log" >&2; exit 1; }
echo "chart check passed"
