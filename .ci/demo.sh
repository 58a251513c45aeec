#!/usr/bin/env bash
# make demo: build, start the Kubecost simulator on loopback, run the
# exporter into ./demo-output (./demo-output-federated with FEDERATED=1, so
# the two demos never mix their clusters), then read the Parquet files back. Needs only
# Go. Run it twice: the second run finds every day stored and current
# ("current" in the plan) and writes nothing. Change LABELS below and run
# again: every stored day is exported again ("config-changed").
# The simulator also writes its cluster's bill, a CUR 2.0 export with split
# cost allocation data, into ./demo-cur-export: each node's instance lines
# at a known rate of Kubecost's list price (a Savings Plan node at 0.72, Spot
# nodes at 0.30, on demand at 1; the simulator prints them as CUR_NODE
# lines), gp3 volume lines, and pod lines split as AWS's split cost
# allocation data splits an instance. The report puts Kubecost next to it
# and the demo prints the comparison. No AWS account is involved.
set -euo pipefail
cd "$(dirname "$0")/.."

federated=${FEDERATED:-}
default_out=demo-output
[ -n "$federated" ] && default_out=demo-output-federated
out=${DEMO_OUTPUT_DIR:-$default_out}
cur=${DEMO_CUR_DIR:-demo-cur-export}
cluster_arn=arn:aws:eks:us-east-1:111122223333:cluster/demo
echo "== building"
go build -trimpath -o bin/ ./cmd/kubecost-s3-exporter ./cmd/kubecost-sim

tmp=$(mktemp -d)
sim_pid=""
cleanup() {
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# FEDERATED=1 (make demo FEDERATED=1): a federated Kubecost primary serving
# several clusters in two accounts and two regions; the exporter gets the
# id-to-ARN map the simulator prints and writes each cluster under its keys.
if [ -n "$federated" ]; then
	echo "== starting a federated Kubecost simulator (seed 42: several clusters, accounts and regions)"
	bin/kubecost-sim -listen 127.0.0.1:0 -seed 42 -federated >"$tmp/sim.out" 2>"$tmp/sim.log" &
else
	echo "== starting the Kubecost simulator (seed 42, 30 days of retention); it first writes its bill into ./$cur"
	bin/kubecost-sim -listen 127.0.0.1:0 -seed 42 -cluster demo-cluster \
		-cur-export "$cur" -cluster-arn "$cluster_arn" >"$tmp/sim.out" 2>"$tmp/sim.log" &
fi
sim_pid=$!
url=""
arns=""
for _ in $(seq 1 600); do # writing the bill takes a few seconds
	url=$(grep -o 'https\?://[^ ]*' "$tmp/sim.out" | head -n1 || true)
	arns=$(sed -n 's/^CLUSTER_ARNS=//p' "$tmp/sim.out" | head -n1)
	[ -n "$url" ] && { [ -z "$federated" ] || [ -n "$arns" ]; } && break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "simulator did not start:" >&2
	cat "$tmp/sim.log" >&2
	exit 1
fi
echo "   simulator at $url"

echo "== running the exporter into ./$out"
before=$( (find "$out" -name "*.parquet" 2>/dev/null || true) | wc -l)
status=0
if [ -n "$federated" ]; then
	echo "   clusters (Kubecost id=EKS ARN): $arns"
	cluster_env=(CLUSTER_ARNS="$arns")
else
	cluster_env=(CLUSTER_ID="$cluster_arn")
fi
env OUTPUT_DIR="$out" \
	"${cluster_env[@]}" \
	KUBECOST_API_ENDPOINT="$url" \
	LABELS="app.kubernetes.io/name, team" \
	ANNOTATIONS="owner" \
	LOG_FORMAT=text \
	bin/kubecost-s3-exporter 2>&1 | tee "$tmp/run.log" | sed -E 's/^time=[^ ]+ //' || status=$?
after=$(find "$out" -name '*.parquet' | wc -l)

echo
echo "== plan: one reason per day Kubecost has (missing, config-changed, drifted, forced, legacy-kept, current, ...)"
grep 'msg="plan day"' "$tmp/run.log" | sed -E 's/.*msg="plan day" (cluster=[^ ]+ )?day=([0-9-]+) reason=([a-z-]+) export=([a-z]+).*/   \1\2  \3  export=\4/' || true
echo
echo "== files written by this run: $((after - before))"
grep 'msg="day written"' "$tmp/run.log" | sed -E 's/.*key="?([^" ]+)"? reason=([a-z-]+) rows=([0-9]+) bytes=([0-9]+).*/   \1  \2 rows=\3 bytes=\4/' || true
if [ "$after" -eq "$before" ]; then
	echo "   nothing new: every available day was already in ./$out"
fi
echo
echo "== cost summary, read back from the Parquet files in ./$out"
bin/kubecost-s3-exporter summary "$out" | sed -n '/^cost per namespace/,$p'
echo
if [ -n "$federated" ]; then
	echo "== HTML report of ./$out (open it in a browser; it needs no network)"
	bin/kubecost-s3-exporter report -dir "$out" -o "$out/report.html" >/dev/null
else
	echo "== Kubecost next to the bill: the simulated CUR 2.0 export in ./$cur (report -bill), per namespace over the archived days"
	echo "   The bill prices each node's instance at a known rate of Kubecost's list price (public on demand = list):"
	sed -n 's/^CUR_NODE /     /p' "$tmp/sim.out"
	echo "   Its pod lines split each instance-hour as AWS's split cost allocation data does (max of request and usage,"
	echo "   vCPU:memory weights 9:1) and give each node's unused capacity (Kubecost's idle) to its pods;"
	echo "   Kubecost counts PV, network and load balancers, which the bill's pod lines do not split (only Kubecost)."
	if ! bin/kubecost-s3-exporter report -dir "$out" -bill "$cur" -o "$out/report.html" >"$tmp/report.out" 2>"$tmp/report.log"; then
		cat "$tmp/report.log" >&2
		exit 1
	fi
	sed -n '/^Kubecost and the bill/,$p' "$tmp/report.out" | sed 's/^/   /'
	echo
	echo "== HTML report of ./$out, with the section 'Kubecost and the bill' (open it in a browser; it needs no network)"
fi
echo "   $(cd "$out" && pwd)/report.html"
if [ -z "$federated" ]; then
	echo
	echo "== The split bill in FOCUS 1.3: the bill-focus module's views on DuckDB (Athena's stand-in) over ./$out and ./$cur,"
	echo "   the CUR's own lines as the origin charges, and every FOCUS 1.3 requirement the views meet, checked by rule id"
	CGO_ENABLED=1 go build -trimpath -o bin/ ./terraform/internal/focuscheck/focusdemo
	bin/focusdemo -archive "$out" -bill "$cur" -terraform terraform | sed 's/^/   /' || status=1
fi
exit "$status"
