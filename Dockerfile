# syntax=docker/dockerfile:1
# payguard: one static binary (CGO_ENABLED=0) on distroless/static, running as the nonroot user (65532).
#
#   docker build -t payguard .
#   docker run --rm -p 8402:8402 -p 8403:8403 -v "$PWD/payguard.yaml:/etc/payguard/payguard.yaml:ro" \
#     payguard proxy --config /etc/payguard/payguard.yaml      # listen on 0.0.0.0 in that file
#
# The Helm chart (charts/payguard) runs it as a sidecar with a read-only root file system: state goes to the
# volume mounted at /data.

ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/payguard ./cmd/payguard

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/payguard /usr/local/bin/payguard
USER 65532:65532
# With no --config, the embedded default keeps its state in ./payguard-data: the nonroot user's home.
WORKDIR /home/nonroot
EXPOSE 8402 8403
ENTRYPOINT ["/usr/local/bin/payguard"]
CMD ["proxy"]
