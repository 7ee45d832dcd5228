#!/usr/bin/env bash
# Static checks of the Dockerfile (no Docker engine needed): base images pinned by a real sha256 digest, the
# OCI labels, a HEALTHCHECK, a default command that reads docker/payguard.yaml (which listens on 0.0.0.0,
# checked by cmd/payguard's TestContainerConfig), and the binary built by scripts/build.sh (the stamped,
# reproducible build), and the OFAC list snapshot the image ships (built and loaded with go run). The release
# workflow runs it before building images.
# A digest of all zeros (a placeholder) fails.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
problem() { echo "check-dockerfile: $*" >&2; fail=1; }

# Every FROM names an image pinned by digest, directly or through an ARG default.
while read -r ref; do
  case "$ref" in
    '${'*'}') arg=${ref#\$\{}; arg=${arg%\}}
      ref=$(sed -n "s/^ARG $arg=\(.*\)$/\1/p" Dockerfile | head -1) ;;
  esac
  digest=${ref##*@sha256:}
  if [ "$digest" = "$ref" ] || ! [[ "$digest" =~ ^[0-9a-f]{64}$ ]]; then
    problem "base image $ref is not pinned by a sha256 digest"
  elif [[ "$digest" =~ ^0{64}$ ]]; then
    problem "$ref has a placeholder digest: fill it (docker buildx imagetools inspect ${ref%@*})"
  fi
done < <(sed -n 's/^FROM \(--platform=[^ ]* \)\{0,1\}\([^ ]*\).*/\2/p' Dockerfile)

for label in title description source version revision created; do
  grep -q "org.opencontainers.image.$label=" Dockerfile || problem "no org.opencontainers.image.$label label"
done
grep -q '^HEALTHCHECK ' Dockerfile || problem "no HEALTHCHECK"
# The build uses exactly go.mod's Go release, whatever 1.26.x the base image carries (reproducible builds).
gover=$(sed -n 's/^go //p' go.mod)
grep -q "^ENV GOTOOLCHAIN=go$gover\$" Dockerfile || problem "the build stage does not pin GOTOOLCHAIN=go$gover (go.mod's go line)"
grep -q '^CMD \["proxy", "--config", "/etc/payguard/payguard.yaml"\]' Dockerfile || problem "the default command does not run the proxy with /etc/payguard/payguard.yaml"
grep -q '^COPY docker/payguard.yaml /etc/payguard/payguard.yaml' Dockerfile || problem "docker/payguard.yaml is not installed"
grep -q 'scripts/build.sh /out/payguard' Dockerfile || problem "the binary is not built by scripts/build.sh"
grep -q '^USER 65532:65532' Dockerfile || problem "not running as the nonroot user"
# The image ships an OFAC snapshot where docker/payguard.yaml's seed_dir points, built by
# docker/sanctions-snapshot.sh; built here too and loaded, it is a plausible list dated by its meta.json (not
# the build's file times).
snap=/usr/share/payguard/sanctions
grep -q '^RUN docker/sanctions-snapshot.sh /out/sanctions$' Dockerfile || problem "the OFAC snapshot is not built by docker/sanctions-snapshot.sh"
grep -q "^COPY --from=build /out/sanctions $snap\$" Dockerfile || problem "the OFAC snapshot is not copied to $snap"
grep -q "^    seed_dir: $snap\$" docker/payguard.yaml || problem "docker/payguard.yaml's seed_dir is not $snap"
work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
if docker/sanctions-snapshot.sh "$work/sanctions" && go run ./cmd/payguard sdn stats --sanctions-dir "$work/sanctions" --json >"$work/stats.json"; then
  entries=$(sed -n 's/^  "entries": \([0-9]*\),$/\1/p' "$work/stats.json")
  [ "${entries:-0}" -ge 5000 ] || problem "the OFAC snapshot has ${entries:-no} entries, fewer than the refresher's minimum (5000)"
  grep -q '"data_as_of_source": "fetch_time"' "$work/stats.json" || problem "the OFAC snapshot's data_as_of is not its recorded fetch time"
  echo "OFAC snapshot: $entries entries, $(sed -n 's/^  "data_as_of": "\(.*\)",$/\1/p' "$work/stats.json")"
else
  problem "the OFAC snapshot does not build or load"
fi
[ $fail = 0 ] && echo "Dockerfile checks passed"
exit $fail
