# syntax=docker/dockerfile:1
# payguard: one static binary (CGO_ENABLED=0) on distroless/static, running as the nonroot user (65532).
#
#   docker build -t payguard \
#     --build-arg COMMIT=$(git rev-parse HEAD) --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) .
#   docker run --rm -p 127.0.0.1:8402:8402 -p 127.0.0.1:8403:8403 -v payguard-data:/data payguard
#
# The default command runs the proxy with docker/payguard.yaml (/etc/payguard/payguard.yaml): the proxy and the
# admin API listen on 0.0.0.0 inside the container, state is in the /data volume. The binary is built by
# scripts/build.sh, the script CI and the release workflow use: reproducible flags (-trimpath, no build id,
# -buildvcs=false, SOURCE_DATE_EPOCH) and the version stamped from the chart's appVersion, so `payguard
# version` in the image says the chart's appVersion (pass VERSION to override it).
#
# The base images are pinned by the digest of their multi-platform index. No registry is reachable where this
# file is written, so the digests could not be resolved here: each is the index digest that public Dockerfiles
# pin for the same tag (golang:1.26-bookworm: b305420a… as pinned by a Dependabot-maintained multi-arch build;
# distroless static-debian12:nonroot: afa5c872…, recorded there "as of 2026-08-26"). The release workflow
# resolves both before it builds (docker buildx imagetools inspect, both platforms present) and fails if either
# does not; refresh them with
#   docker buildx imagetools inspect golang:1.26-bookworm --format '{{json .Manifest.Digest}}'
# The Go release is pinned apart from the image (GOTOOLCHAIN below): a 1.26.x image builds with exactly go1.26.8,
# the go.mod's version, fetched and checked against the Go checksum database if the image has another.

ARG GO_IMAGE=golang:1.26-bookworm@sha256:b305420a68d0f229d91eb3b3ed9e519fcf2cf5461da4bef997bf927e8c0bfd2b
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build
ENV GOTOOLCHAIN=go1.26.8
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=""
ARG COMMIT=unknown
ARG SOURCE_DATE_EPOCH=0
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH VERSION=$VERSION COMMIT=$COMMIT SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH \
    scripts/build.sh /out/payguard && mkdir -p /out/data
# The OFAC list snapshot the image ships (docker/payguard.yaml's seed_dir): a new container is ready at once,
# with the snapshot's age in /readyz's data_as_of, and replaces it with its first download.
RUN docker/sanctions-snapshot.sh /out/sanctions

FROM ${RUNTIME_IMAGE}
ARG VERSION=""
ARG COMMIT=unknown
ARG CREATED=""
LABEL org.opencontainers.image.title="payguard" \
      org.opencontainers.image.description="Forward proxy sidecar that decides every x402 payment an AI agent makes before it can pay" \
      org.opencontainers.image.source="https://github.com/payguard/payguard" \
      org.opencontainers.image.url="https://github.com/payguard/payguard" \
      org.opencontainers.image.documentation="https://github.com/payguard/payguard/blob/main/README.md" \
      org.opencontainers.image.vendor="payguard" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /out/payguard /usr/local/bin/payguard
COPY docker/payguard.yaml /etc/payguard/payguard.yaml
COPY --from=build /out/sanctions /usr/share/payguard/sanctions
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8402 8403
# The admin API's /healthz (for `payguard serve`, override: --health-cmd "payguard healthcheck --url
# http://127.0.0.1:8080/health"). distroless has no shell or curl: the binary checks itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/payguard", "healthcheck", "--url", "http://127.0.0.1:8403/healthz"]
ENTRYPOINT ["/usr/local/bin/payguard"]
CMD ["proxy", "--config", "/etc/payguard/payguard.yaml"]
