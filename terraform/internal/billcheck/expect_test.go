//go:build cgo

package billcheck_test

import (
	"slices"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// The expected views, computed with straight loops over the fixture rows
// and nothing of the SQL or of exporter/bill. The bill's rules, restated
// from AWS's scad_cca_summary_view
// (aws-solutions-library-samples/cloud-intelligence-dashboards-framework,
// dashboards/scad-containers-cost-allocation, EKS pods only):
//   - a pod line's resource id is arn:<partition>:eks:<region>:<account>:
//     pod/<cluster>/<namespace>/<pod>/<uid>; its cluster ARN has cluster/
//     for pod/;
//   - EKSPod-EC2 lines of a CPU, memory or GPU usage type count unless
//     they have no parent instance and a split cost of 0 or null;
//   - FargatePod lines count when their usage type ends in
//     Fargate-vCPU-Hours:perCPU or Fargate-GB-Hours and their type is
//     Usage or SavingsPlanCoveredUsage;
//   - EC2: split and unused cost as written; a net column above 0 is used,
//     0 or null falls back to the gross one, below 0 is 0;
//   - Fargate: Savings Plan effective cost when covered, else unblended;
//     net likewise when the net unblended cost is above 0; no unused cost;
//   - the day is the UTC day of line_item_usage_start_date; a null adds
//     nothing; a bill sum over lines is 0 when every line is null.

type billSums struct {
	split, unused, netSplit, netUnused, pod float64
	byKind                                  map[string]float64 // split + unused by cpu, memory, gpu
}

func has(r *curfixture.Row, col string) bool { return !slices.Contains(r.NullStrings, col) }

func strCol(r *curfixture.Row, col, v string) string {
	if !has(r, col) {
		return ""
	}
	return v
}

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// netOr is AWS's CASE: net above 0, else gross when net is 0 or null,
// else 0.
func netOr(net, gross *float64) float64 {
	switch {
	case net != nil && *net > 0:
		return *net
	case net == nil || *net == 0:
		return val(gross)
	}
	return 0
}

// podLine returns the key of a pod line and its costs, or ok false.
func podLine(r *curfixture.Row) (key string, s billSums, ok bool) {
	id := strCol(r, "line_item_resource_id", r.ResourceID)
	op := strCol(r, "line_item_operation", r.Operation)
	ut := strCol(r, "line_item_usage_type", r.UsageType)
	typ := strCol(r, "line_item_line_item_type", r.LineItemType)
	arn := strings.SplitN(id, ":", 6)
	if len(arn) < 6 || arn[0] != "arn" || arn[2] != "eks" || !strings.HasPrefix(arn[5], "pod/") || r.Start.IsZero() {
		return "", s, false
	}
	parts := strings.Split(arn[5], "/") // pod, cluster, namespace, pod, uid
	if len(parts) < 3 {
		return "", s, false
	}
	clusterARN := strings.Join(arn[:5], ":") + ":cluster/" + parts[1]
	key = clusterARN + "|" + parts[2] + "|" + date(r.Start.UTC())
	switch {
	case op == "EKSPod-EC2":
		kind := strings.HasSuffix(ut, "EKS-EC2-vCPU-Hours") || strings.HasSuffix(ut, "EKS-EC2-GB-Hours") ||
			strings.HasSuffix(ut, "EKS-EC2-Accelerator-Hours")
		parent := strCol(r, "split_line_item_parent_resource_id", r.ParentResourceID)
		if !kind || (parent == "" && (r.SplitCost == nil || *r.SplitCost == 0)) {
			return "", s, false
		}
		k := map[bool]string{true: "cpu", false: "memory"}[strings.HasSuffix(ut, "vCPU-Hours")]
		if strings.HasSuffix(ut, "Accelerator-Hours") {
			k = "gpu"
		}
		return key, billSums{val(r.SplitCost), val(r.UnusedCost), netOr(r.NetSplit, r.SplitCost),
			netOr(r.NetUnused, r.UnusedCost), val(r.PODSplit) + val(r.PODUnused),
			map[string]float64{k: val(r.SplitCost) + val(r.UnusedCost)}}, true
	case op == "FargatePod":
		if !(strings.HasSuffix(ut, "Fargate-vCPU-Hours:perCPU") || strings.HasSuffix(ut, "Fargate-GB-Hours")) ||
			(typ != "Usage" && typ != "SavingsPlanCoveredUsage") {
			return "", s, false
		}
		cost, net := r.Unblended, r.NetUnblended
		if typ == "SavingsPlanCoveredUsage" {
			cost, net = r.SPEffective, r.SPNetEffective
		}
		n := val(cost)
		switch {
		case r.NetUnblended != nil && *r.NetUnblended > 0:
			n = val(net)
		case r.NetUnblended != nil && *r.NetUnblended < 0:
			n = 0
		}
		pod := val(r.PublicOnDemand)
		if strings.Contains(ut, "Spot") {
			pod = val(r.Unblended)
		}
		k := map[bool]string{true: "cpu", false: "memory"}[strings.HasSuffix(ut, "Fargate-vCPU-Hours:perCPU")]
		return key, billSums{split: val(cost), netSplit: n, pod: pod, byKind: map[string]float64{k: val(cost)}}, true
	}
	return "", s, false
}

type kcSums struct{ cpu, ram, gpu, idle, pv, network, lb, shared, total float64 }

// kubecostNamespace is Kubecost's namespace of a row as the views name it.
func kubecostNamespace(r kcRow) (ns string, idle bool) {
	if r.namespace != "" {
		return r.namespace, false
	}
	if r.name == "__idle__" || strings.HasSuffix(r.name, "/__idle__") {
		return "__idle__", true
	}
	return "__unallocated__", false
}

// expectNamespaces is namespace_daily, keyed cluster_arn|namespace|date.
// steps are the waterfall's per key (expectSplit); a key only they have is
// a bill_only row (the split's bill-only instances, __unallocated__).
func expectNamespaces(kc []kcRow, cur []curfixture.Row, steps map[string]*split.Steps) map[string]viewRow {
	ks := map[string]*kcSums{}
	for _, r := range kc {
		ns, idle := kubecostNamespace(r)
		k := r.clusterID + "|" + ns + "|" + date(r.day)
		s := ks[k]
		if s == nil {
			s = &kcSums{}
			ks[k] = s
		}
		cpu, ram, gpu := r.cpu+r.cpuAdj, r.ram+r.ramAdj, r.gpu+r.gpuAdj
		s.cpu, s.ram, s.gpu = s.cpu+cpu, s.ram+ram, s.gpu+gpu
		if idle {
			s.idle += cpu + ram + gpu
		} else {
			s.idle += val(r.cpuIdle)
		}
		s.pv, s.network, s.lb, s.shared, s.total = s.pv+r.pv, s.network+r.network, s.lb+r.lb, s.shared+r.shared, s.total+r.total()
	}
	bs := map[string]*billSums{}
	for i := range cur {
		k, c, ok := podLine(&cur[i])
		if !ok {
			continue
		}
		s := bs[k]
		if s == nil {
			s = &billSums{byKind: map[string]float64{}}
			bs[k] = s
		}
		for kind, v := range c.byKind {
			s.byKind[kind] += v
		}
		s.split, s.unused, s.netSplit, s.netUnused, s.pod = s.split+c.split, s.unused+c.unused, s.netSplit+c.netSplit, s.netUnused+c.netUnused, s.pod+c.pod
	}
	out := map[string]viewRow{}
	keys := map[string]bool{}
	for k := range ks {
		keys[k] = true
	}
	for k := range bs {
		keys[k] = true
	}
	for k := range steps {
		keys[k] = true
	}
	for k := range keys {
		r := viewRow{cost: map[string]*float64{}}
		set := func(c string, v float64) { r.cost[c] = &v }
		k1, b := ks[k], bs[k]
		var kCompute, bCost, bNet float64
		switch {
		case k1 != nil && b != nil:
			r.presentIn = "both"
		case k1 != nil:
			r.presentIn = "kubecost_only"
		default:
			r.presentIn = "bill_only"
		}
		if k1 != nil {
			kCompute = k1.cpu + k1.ram + k1.gpu
			set("kubecost_cpu_cost", k1.cpu)
			set("kubecost_ram_cost", k1.ram)
			set("kubecost_gpu_cost", k1.gpu)
			set("kubecost_compute_cost", kCompute)
			set("kubecost_idle_cost", k1.idle)
			set("kubecost_pv_cost", k1.pv)
			set("kubecost_network_cost", k1.network)
			set("kubecost_load_balancer_cost", k1.lb)
			set("kubecost_only_cost", k1.pv+k1.network+k1.lb)
			set("kubecost_shared_cost", k1.shared)
			set("kubecost_total_cost", k1.total)
		}
		if b != nil {
			bCost, bNet = b.split+b.unused, b.netSplit+b.netUnused
			set("bill_split_cost", b.split)
			set("bill_unused_cost", b.unused)
			set("bill_cost", bCost)
			set("bill_net_split_cost", b.netSplit)
			set("bill_net_unused_cost", b.netUnused)
			set("bill_net_cost", bNet)
			set("bill_public_on_demand_cost", b.pod)
			set("bill_cpu_cost", b.byKind["cpu"])
			set("bill_memory_cost", b.byKind["memory"])
			set("bill_gpu_cost", b.byKind["gpu"])
		}
		_, _, _ = kCompute, bCost, bNet
		setSteps(&r, steps[k])
		out[k] = r
	}
	return out
}

// rollUp sums the namespace rows by a coarser key as SQL's SUM does (nulls
// ignored, null when all are null); present_in is both when the rows
// mix sides or any is both.
func rollUp(ns map[string]viewRow, key func(string) string) map[string]viewRow {
	out := map[string]viewRow{}
	notBill, notKC := map[string]bool{}, map[string]bool{}
	for k, r := range ns {
		ck := key(k)
		o, ok := out[ck]
		if !ok {
			o = viewRow{cost: map[string]*float64{}}
		}
		for c, v := range r.cost {
			if v == nil {
				continue
			}
			if o.cost[c] == nil {
				z := 0.0
				o.cost[c] = &z
			}
			*o.cost[c] += *v
		}
		notBill[ck] = notBill[ck] || r.presentIn != "bill_only"
		notKC[ck] = notKC[ck] || r.presentIn != "kubecost_only"
		out[ck] = o
	}
	for ck, o := range out {
		switch {
		case !notBill[ck]:
			o.presentIn = "bill_only"
		case !notKC[ck]:
			o.presentIn = "kubecost_only"
		default:
			o.presentIn = "both"
		}
		out[ck] = o
	}
	return out
}
