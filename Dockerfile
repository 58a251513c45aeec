# syntax=docker/dockerfile:1
# Multi-stage build of a static binary on distroless/static: no shell, no
# package manager, numeric non-root UID 65532 so Kubernetes can verify
# runAsNonRoot without resolving user names.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS TARGETARCH
ARG VERSION=dev
WORKDIR /src
# Modules first, so source edits do not invalidate the download layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY exporter/ exporter/
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath \
      -ldflags "-s -w -X github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter.Version=${VERSION}" \
      -o /out/kubecost-s3-exporter ./cmd/kubecost-s3-exporter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kubecost-s3-exporter /usr/local/bin/kubecost-s3-exporter
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubecost-s3-exporter"]
CMD ["run"]
