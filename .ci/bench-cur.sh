#!/usr/bin/env bash
# make bench-cur (and the last step of make bench): time and peak RSS of
# `kubecost-s3-exporter report -cur` over a synthetic month of CUR 2.0 with
# split cost allocation data: 10 EKS clusters x 300 pods x 24 hours x 30
# days, a CPU and a memory line per pod and hour (4.32M pod lines, plus
# 180k lines of the nodes themselves, which are not pod lines), next to an
# archive of the same clusters and days (kse-bench cur-month,
# internal/bench/curmonth.go). Measured with GNU time (/usr/bin/time -v):
# the report of the archive alone, with -bill over the month, and with -bill
# over one week (row groups outside it are skipped by their statistics).
# Needs only Go and GNU time.
#
# Environment:
#   BENCH_CUR_DIR=.cache/bench-cur   where the month is kept (reused while the sizes stay)
#   BENCH_CUR_CLUSTERS=10            clusters
#   BENCH_CUR_DAYS=30                days from 2026-10-01
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${BENCH_CUR_DIR:-.cache/bench-cur}
clusters=${BENCH_CUR_CLUSTERS:-10}
days=${BENCH_CUR_DAYS:-30}
log() { printf '%s bench-cur: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

log "building binaries into bin/"
make --no-print-directory build >&2
params="clusters=$clusters days=$days pods=20x15 v1"
if [[ "$(cat "$dir/.params" 2>/dev/null || true)" != "$params" ]]; then
	log "writing the synthetic month into $dir ($params)"
	rm -rf "$dir"
	mkdir -p "$dir"
	bin/kse-bench cur-month -dir "$dir" -clusters "$clusters" -days "$days" >&2
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

echo "| run | bill read | wall (m:ss) | CPU s (user+sys) | peak RSS MiB |"
echo "|---|---|--:|--:|--:|"
measure "archive only, no -cur"
measure "-bill, the month" -bill "$dir/cur"
measure "-bill, one week (-from 2026-10-24 -to 2026-10-30)" -bill "$dir/cur" -from 2026-10-24 -to 2026-10-30
