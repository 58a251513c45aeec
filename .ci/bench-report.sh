#!/usr/bin/env bash
# make bench-report: peak memory and time of `kubecost-s3-exporter report`
# over a month of a cluster with about 1M allocations a day. One hourly day
# is exported from the simulator, then copied under 30 day names (the
# report reads every file the same way, so a copy costs what a new day
# would). Needs only Go and GNU time (/usr/bin/time).
#
# Environment:
#   REPORT_BENCH_ALLOCS=1000000   allocations per day
#   REPORT_BENCH_DAYS=30          days in the archive
#   REPORT_BENCH_DIR=.cache/bench-report  where the archive is kept (reused)
set -euo pipefail
cd "$(dirname "$0")/.."

allocs=${REPORT_BENCH_ALLOCS:-1000000}
days=${REPORT_BENCH_DAYS:-30}
dir=${REPORT_BENCH_DIR:-.cache/bench-report}/$allocs
log() { printf '%s bench-report: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

CGO_ENABLED=0 go build -trimpath -o bin/ ./cmd/kubecost-s3-exporter ./cmd/kubecost-sim
month="$dir/archive/account_id=111122223333/region=us-east-1/year=2026/month=10"
seed="$month/2026-10-01_bench.snappy.parquet"
if [[ ! -f "$seed" ]]; then
	tmp=$(mktemp -d)
	trap 'kill "${sim_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
	log "exporting one hourly day of about $allocs allocations from the simulator"
	bin/kubecost-sim -listen 127.0.0.1:0 -seed 1 \
		-containers-per-hour $((allocs / 24)) >"$tmp/sim.out" 2>"$tmp/sim.log" &
	sim_pid=$!
	for _ in $(seq 1 100); do
		url=$(grep -o 'https\?://[^ ]*' "$tmp/sim.out" | head -n1 || true)
		[[ -n "$url" ]] && break
		sleep 0.1
	done
	mkdir -p "$tmp/out"
	OUTPUT_DIR="$tmp/out" CLUSTER_ID=arn:aws:eks:us-east-1:111122223333:cluster/bench \
		KUBECOST_API_ENDPOINT="$url" GRANULARITY=hourly BACKFILL_PERIOD_DAYS=3 \
		LABELS="app.kubernetes.io/name, team" LOG_LEVEL=warn \
		bin/kubecost-s3-exporter
	mkdir -p "$month"
	mv "$(find "$tmp/out" -name '*.parquet' | head -n1)" "$seed"
fi
for d in $(seq 2 "$days"); do
	f=$(printf '%s/2026-10-%02d_bench.snappy.parquet' "$month" "$d")
	[[ -f "$f" ]] || cp "$seed" "$f"
done
rows=$(bin/kubecost-s3-exporter summary "$seed" | sed -n 's/.*over 1 files, \([0-9]*\) rows.*/\1/p')
size=$(du -sh "$dir/archive" | cut -f1)
log "archive: $days files of $rows rows ($size); running the report"
/usr/bin/time -f '%M %e' -o "$dir/time.txt" \
	bin/kubecost-s3-exporter report -dir "$dir/archive" -today 2026-11-01 -o "$dir/report.html" >/dev/null
read -r kib secs <"$dir/time.txt"
printf '| report over %d days x %s rows (%s of Parquet) | %s s | %d MiB |\n' "$days" "$rows" "$size" "$secs" $((kib / 1024))
