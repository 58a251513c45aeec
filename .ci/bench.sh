#!/usr/bin/env bash
# make bench: measures the real exporter binary end to end on simulated
# hourly days of about 24k, 120k and 1M allocations, into a directory and
# into MinIO, against the tokenize floor; prints a markdown table and
# updates docs/performance.md after a full run. Needs only Go (MinIO is
# built with go install and cached by .ci/install-tools.sh).
#
# Environment:
#   BENCH_RUNS=3              runs per size and sink (median wall, max RSS)
#   BENCH_SIZES=24k,120k,1M   allocations per hourly day
#   BENCH_MINIO=1             0 skips the MinIO sink (and the doc update)
#   BENCH_STRICT=0            1 exits non-zero when a target is missed
#   BENCH_FLEET=4x1.2M        federated scenario: clusters x allocations per fleet day ("" skips it)
#   BENCH_CACHE=.cache/bench  rendered days (1M ≈ 2.4 GB), reused the same UTC day
#   BENCH_ARGS=               more kse-bench flags, e.g. "-work /tmp/kse -env GOGC=50"
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '%s bench: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

log "building binaries into bin/"
# `make build`, so the measured binary is the shipped one (stripped, stamped).
make --no-print-directory build >&2

args=(
	-exporter bin/kubecost-s3-exporter
	-cache "${BENCH_CACHE:-.cache/bench}"
	-runs "${BENCH_RUNS:-3}"
	-sizes "${BENCH_SIZES:-24k,120k,1M}"
	-fleet "${BENCH_FLEET-4x1.2M}"
	-doc docs/performance.md
	-rev "$(git describe --always --dirty=' + uncommitted changes' 2>/dev/null || echo unknown)"
)
if [[ "${BENCH_MINIO:-1}" != 0 ]]; then
	log "locating MinIO (built once with go install, then cached)"
	eval "$(bash .ci/install-tools.sh minio)"
	args+=(-minio "$MINIO_BIN")
fi
if [[ "${BENCH_STRICT:-0}" == 1 ]]; then
	args+=(-strict)
fi
# shellcheck disable=SC2206 # BENCH_ARGS is split on purpose
extra=(${BENCH_ARGS:-})

exec bin/kse-bench "${args[@]}" "${extra[@]}"
