#!/usr/bin/env bash
# Static checks of the Dockerfile (no Docker engine needed): base images pinned by a real sha256 digest, the
# OCI labels, a HEALTHCHECK, a default command that reads docker/payguard.yaml (which listens on 0.0.0.0,
# checked by cmd/payguard's TestContainerConfig), and the binary built by scripts/build.sh (the stamped,
# reproducible build). The release workflow runs it before building images.
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
[ $fail = 0 ] && echo "Dockerfile checks passed"
exit $fail
