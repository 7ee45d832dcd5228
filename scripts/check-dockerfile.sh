#!/usr/bin/env bash
# Static checks of the Dockerfile (no Docker engine needed): base images pinned by a real sha256 digest, the
# OCI labels, a HEALTHCHECK, a default command that reads docker/payguard.yaml (which listens on 0.0.0.0,
# checked by cmd/payguard's TestContainerConfig), and the binary built by scripts/build.sh (the stamped,
# reproducible build). The release workflow runs it before building images.
#
#   scripts/check-dockerfile.sh                 # strict: placeholder digests fail
#   scripts/check-dockerfile.sh --allow-placeholder-digests   # scripts/test.sh: reports them, does not fail
set -euo pipefail
cd "$(dirname "$0")/.."
allow_placeholder=false
[ "${1:-}" = "--allow-placeholder-digests" ] && allow_placeholder=true
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
    if $allow_placeholder; then
      echo "check-dockerfile: WARNING: $ref has a placeholder digest; fill it before a release (see the Dockerfile's header)" >&2
    else
      problem "$ref has a placeholder digest: fill it (docker buildx imagetools inspect ${ref%@*})"
    fi
  fi
done < <(sed -n 's/^FROM \(--platform=[^ ]* \)\{0,1\}\([^ ]*\).*/\2/p' Dockerfile)

for label in title description source version revision created; do
  grep -q "org.opencontainers.image.$label=" Dockerfile || problem "no org.opencontainers.image.$label label"
done
grep -q '^HEALTHCHECK ' Dockerfile || problem "no HEALTHCHECK"
grep -q '^CMD \["proxy", "--config", "/etc/payguard/payguard.yaml"\]' Dockerfile || problem "the default command does not run the proxy with /etc/payguard/payguard.yaml"
grep -q '^COPY docker/payguard.yaml /etc/payguard/payguard.yaml' Dockerfile || problem "docker/payguard.yaml is not installed"
grep -q 'scripts/build.sh /out/payguard' Dockerfile || problem "the binary is not built by scripts/build.sh"
grep -q '^USER 65532:65532' Dockerfile || problem "not running as the nonroot user"
[ $fail = 0 ] && echo "Dockerfile checks passed"
exit $fail
