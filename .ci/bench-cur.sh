#!/usr/bin/env bash
# make bench-cur (and the last step of make bench): time and peak RSS of
# `kubecost-s3-exporter report -bill` over a synthetic month of an
# organisation's CUR 2.0 with split cost allocation data: 10 EKS clusters
# of 30 nodes x 300 pods x 24 hours x 30 days, a CPU and a memory line per
# pod and hour (4.32M pod lines), each node's own hourly line (216k), and
# 20 times as many lines of other services (90.7M), next to an archive of
# the same clusters and days (kse-bench cur-month,
# internal/bench/curmonth.go). Measured with GNU time (/usr/bin/time -v):
# the report of the archive alone, with -bill over the month and over one
# week (row groups outside it are skipped by their statistics), and DuckDB
# doing the per-instance join on the same files (bin/kse-duckjoin,
# internal/bench/duckjoin, built with cgo). Then, with MinIO, the bytes the
# report GETs for the week from S3 (kse-bench cur-s3). Needs Go, a C
# compiler for DuckDB, GNU time, and MinIO (.ci/install-tools.sh minio;
# BENCH_MINIO=0 skips the S3 row).
#
# Environment:
#   BENCH_CUR_DIR=.cache/bench-cur   where the month is kept (reused while the sizes stay)
#   BENCH_CUR_CLUSTERS=10            clusters
#   BENCH_CUR_DAYS=30                days from 2026-10-01
#   BENCH_CUR_OTHER=20               lines of other services per line of the clusters
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${BENCH_CUR_DIR:-.cache/bench-cur}
clusters=${BENCH_CUR_CLUSTERS:-10}
days=${BENCH_CUR_DAYS:-30}
other=${BENCH_CUR_OTHER:-20}
log() { printf '%s bench-cur: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

log "building binaries into bin/"
make --no-print-directory build >&2
CGO_ENABLED=1 go build -trimpath -o bin/kse-duckjoin ./internal/bench/duckjoin >&2
params="clusters=$clusters days=$days pods=20x15 nodes=30 other=$other v2"
if [[ "$(cat "$dir/.params" 2>/dev/null || true)" != "$params" ]]; then
	log "writing the synthetic month into $dir ($params)"
	rm -rf "$dir"
	mkdir -p "$dir"
	bin/kse-bench cur-month -dir "$dir" -clusters "$clusters" -days "$days" -other "$other" >&2
	echo "$params" >"$dir/.params"
fi
log "CUR export: $(find "$dir/cur" -name '*.parquet' | wc -l) files, $(du -sh "$dir/cur" | cut -f1); archive: $(find "$dir/archive" -name '*.parquet' | wc -l) files, $(du -sh "$dir/archive" | cut -f1)"

# measure LABEL ARGS...: one report run under GNU time, as a markdown row.
measure() {
	local label=$1
	shift
	/usr/bin/time -v -o "$dir/time.txt" bin/kubecost-s3-exporter report -dir "$dir/archive" -today 2026-11-01 \
		-o "$dir/report.html" "$@" >"$dir/report.out" 2>"$dir/report.log" || {
		cat "$dir/report.log" >&2
		exit 1
	}
	local kib wall user sys lines
	kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt")
	user=$(sed -n 's/.*User time (seconds): //p' "$dir/time.txt")
	sys=$(sed -n 's/.*System time (seconds): //p' "$dir/time.txt")
	lines=$(sed -n 's/^Kubecost and the bill (.*: \([0-9]*\) files, \([0-9]*\) pod lines; \(.*\))$/\1 files, \2 pod lines, \3/p' "$dir/report.out")
	awk -v l="$label" -v b="${lines:-}" -v w="$wall" -v u="$user" -v s="$sys" -v k="$kib" \
		'BEGIN { printf "| %s | %s | %s | %.1f | %.1f |\n", l, b, w, u + s, k / 1024 }' </dev/null
}

# duck LABEL ARGS...: the DuckDB join under GNU time, as a markdown row.
duck() {
	local label=$1
	shift
	/usr/bin/time -v -o "$dir/time.txt" bin/kse-duckjoin -cur "$dir/cur" "$@" >"$dir/duck.out" 2>"$dir/duck.log" || {
		cat "$dir/duck.log" >&2
		exit 1
	}
	local kib wall user sys res
	kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
	wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt")
	user=$(sed -n 's/.*User time (seconds): //p' "$dir/time.txt")
	sys=$(sed -n 's/.*System time (seconds): //p' "$dir/time.txt")
	res=$(sed -n 's/^duckjoin: \([0-9].*\)$/\1/p' "$dir/duck.out" | head -n1)
	awk -v l="$label" -v b="$res" -v w="$wall" -v u="$user" -v s="$sys" -v k="$kib" \
		'BEGIN { printf "| %s | %s | %s | %.1f | %.1f |\n", l, b, w, u + s, k / 1024 }' </dev/null
}

echo "| run | bill read | wall (m:ss) | CPU s (user+sys) | peak RSS MiB |"
echo "|---|---|--:|--:|--:|"
measure "archive only, no -bill"
measure "-bill, the month" -bill "$dir/cur"
measure "-bill, one week (-from 2026-10-24 -to 2026-10-30)" -bill "$dir/cur" -from 2026-10-24 -to 2026-10-30
duck "DuckDB per-instance join, the month"
duck "DuckDB per-instance join, one week" -from 2026-10-24 -to 2026-10-30

if [[ "${BENCH_MINIO:-1}" != 0 ]]; then
	log "putting the export into MinIO and reading one week of it through a counting proxy"
	eval "$(bash .ci/install-tools.sh minio)"
	echo
	echo "| run | export | GETs | bytes fetched (of the export) | wall | peak RSS MiB | bill read |"
	echo "|---|---|--:|--:|--:|--:|---|"
	bin/kse-bench cur-s3 -dir "$dir" -minio "$MINIO_BIN" -from 2026-10-24 -to 2026-10-30
fi
