//go:build cgo

package billcheck_test

import (
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// TestBillViewsCases asserts, on the views' own output, each case issue 43
// lists, so that none can disappear from the fixtures unnoticed (the
// straight Go computation of TestBillViewsEqualGo checks the numbers).
func TestBillViewsCases(t *testing.T) {
	kc, cur := archiveRows(), curfixture.Canonical()
	db := openViews(t, kc, cur)
	ns := query(t, db, "kubecost_bill_namespace_daily", "cluster_arn", "namespace", "usage_date")
	a, b := curfixture.ClusterA, curfixture.ClusterB
	d1, d2 := date(curfixture.Day1), date(curfixture.Day2)
	row := func(cluster, namespace, day string) viewRow {
		t.Helper()
		r, ok := ns[cluster+"|"+namespace+"|"+day]
		if !ok {
			t.Fatalf("no row %s %s %s", cluster, namespace, day)
		}
		return r
	}
	pos := func(r viewRow, c string) bool { v := r.cost[c]; return v != nil && *v > 0 }

	t.Run("EKSPod-EC2 and FargatePod", func(t *testing.T) {
		// payments runs on EC2 (unused cost > 0), batch on Fargate (no unused cost).
		if r := row(a, "payments", d1); !pos(r, "bill_split_cost") || !pos(r, "bill_unused_cost") {
			t.Errorf("EC2 pod: split %s unused %s", show(r.cost["bill_split_cost"]), show(r.cost["bill_unused_cost"]))
		}
		if r := row(a, "batch", d1); !pos(r, "bill_split_cost") || *r.cost["bill_unused_cost"] != 0 {
			t.Errorf("Fargate pod: split %s unused %s, want > 0 and 0", show(r.cost["bill_split_cost"]), show(r.cost["bill_unused_cost"]))
		}
	})
	t.Run("GPU", func(t *testing.T) {
		// ml/trainer's two hours on a GPU instance: 0.80 split and 0 unused
		// each on the accelerator lines.
		r := row(a, "ml", d1)
		if g := r.cost["bill_gpu_cost"]; !pos(r, "kubecost_gpu_cost") || g == nil || *g < 1.6-1e-9 || *g > 1.6+1e-9 {
			t.Errorf("ml: Kubecost GPU %s, bill GPU %s (want 1.60)", show(r.cost["kubecost_gpu_cost"]), show(g))
		}
	})
	t.Run("across midnight", func(t *testing.T) {
		// payments/api runs 22:00 Day1 to 02:00 Day2: two hours on each day.
		r1, r2 := row(a, "payments", d1), row(a, "payments", d2)
		if !pos(r1, "bill_split_cost") || !pos(r2, "bill_split_cost") {
			t.Errorf("payments: split %s on Day1, %s on Day2", show(r1.cost["bill_split_cost"]), show(r2.cost["bill_split_cost"]))
		}
	})
	t.Run("one side only, never dropped", func(t *testing.T) {
		bo, ko := row(a, "experiments", d2), row(a, "monitoring", d1)
		if bo.presentIn != "bill_only" || bo.cost["kubecost_compute_cost"] != nil || !pos(bo, "bill_cost") {
			t.Errorf("experiments: %s, Kubecost %s, bill %s", bo.presentIn, show(bo.cost["kubecost_compute_cost"]), show(bo.cost["bill_cost"]))
		}
		if ko.presentIn != "kubecost_only" || ko.cost["bill_cost"] != nil || ko.cost["bill_split_cost"] != nil || !pos(ko, "kubecost_compute_cost") {
			t.Errorf("monitoring: %s, bill %s, Kubecost %s", ko.presentIn, show(ko.cost["bill_cost"]), show(ko.cost["kubecost_compute_cost"]))
		}
		// A namespace only SCAD has: nothing of Kubecost's split, and the
		// waterfall's last step takes it to SCAD's net cost.
		if *bo.cost["split_bill_cost"] != 0 || *bo.cost["kubecost_cost"] != 0 || *bo.cost["scad_cost"] != *bo.cost["bill_net_cost"] ||
			*bo.cost["split_weights_step"] != *bo.cost["scad_cost"] {
			t.Errorf("experiments: split %s, scad %s, weights %s, bill net %s", show(bo.cost["split_bill_cost"]), show(bo.cost["scad_cost"]),
				show(bo.cost["split_weights_step"]), show(bo.cost["bill_net_cost"]))
		}
		if idle := row(a, "__idle__", d1); idle.presentIn != "kubecost_only" || !pos(idle, "kubecost_idle_cost") {
			t.Errorf("Kubecost's idle: %s idle %s", idle.presentIn, show(idle.cost["kubecost_idle_cost"]))
		}
	})
	t.Run("same-name cluster in another account", func(t *testing.T) {
		ra, rb := row(a, "payments", d1), row(b, "payments", d1)
		if *rb.cost["kubecost_compute_cost"] != 0.09 || *rb.cost["bill_split_cost"] != 0.09 {
			t.Errorf("B payments: Kubecost %s bill %s, want B's own 0.09 and 0.09", show(rb.cost["kubecost_compute_cost"]), show(rb.cost["bill_split_cost"]))
		}
		if *ra.cost["bill_split_cost"] == *ra.cost["bill_split_cost"]+*rb.cost["bill_split_cost"] {
			t.Error("A's bill holds B's")
		}
		if c := row(clusterC, "payments", d1); c.presentIn != "kubecost_only" {
			t.Errorf("a third prod without a bill: %s", c.presentIn)
		}
		if c := row(onPremID, "payments", d1); c.presentIn != "kubecost_only" {
			t.Errorf("a cluster that is not EKS: %s", c.presentIn)
		}
	})
	t.Run("non-pod lines ignored", func(t *testing.T) {
		var viewSplit, podSplit, allCost float64
		for _, r := range ns {
			if v := r.cost["bill_split_cost"]; v != nil {
				viewSplit += *v
			}
		}
		for i := range cur {
			if _, s, ok := podLine(&cur[i]); ok {
				podSplit += s.split
			}
			allCost += val(cur[i].SplitCost) + val(cur[i].Unblended)
		}
		if diff := viewSplit - podSplit; diff > 1e-9 || diff < -1e-9 || allCost-podSplit < 1 {
			t.Errorf("bill split %.6f, pod lines' %.6f, every line's %.6f", viewSplit, podSplit, allCost)
		}
	})
	t.Run("RI and SP net", func(t *testing.T) {
		for _, r := range []viewRow{row(a, "payments", d1), row(a, "ml", d1)} {
			if !(*r.cost["bill_net_cost"] < *r.cost["bill_cost"]) {
				t.Errorf("net %s not below gross %s", show(r.cost["bill_net_cost"]), show(r.cost["bill_cost"]))
			}
		}
		// ml's instance is under a Savings Plan with a net cost below it.
		if r := row(a, "ml", d1); !(*r.cost["negotiated_step"] < 0) || !(*r.cost["discounts_step"] < 0) {
			t.Errorf("ml: negotiated %s, discounts %s, want both below 0", show(r.cost["negotiated_step"]), show(r.cost["discounts_step"]))
		}
		// B has no discounts: null net columns fall back to the gross ones.
		if r := row(b, "payments", d1); *r.cost["bill_net_cost"] != *r.cost["bill_cost"] {
			t.Errorf("B: net %s, gross %s", show(r.cost["bill_net_cost"]), show(r.cost["bill_cost"]))
		}
	})
	t.Run("null versus 0", func(t *testing.T) {
		// payments/worker on Day2 has a null and a 0 net split: both fall
		// back to the split cost (Go expectation); a Kubecost-only row's
		// bill columns are null, not 0; Kubecost's null idle is 0 in sums.
		_, steps := expectSplit(t, kc, cur)
		want := expectNamespaces(kc, cur, steps)[a+"|payments|"+d2]
		got := row(a, "payments", d2)
		if *got.cost["bill_net_split_cost"] != *want.cost["bill_net_split_cost"] {
			t.Errorf("net split %s, want %s", show(got.cost["bill_net_split_cost"]), show(want.cost["bill_net_split_cost"]))
		}
		if r := row(a, "monitoring", d1); r.cost["bill_unused_cost"] != nil || r.cost["kubecost_idle_cost"] == nil {
			t.Errorf("monitoring: bill unused %s (want null), Kubecost idle %s (want 0)", show(r.cost["bill_unused_cost"]), show(r.cost["kubecost_idle_cost"]))
		}
		if r := row(a, "payments", d2); *r.cost["kubecost_idle_cost"] != 0.005 {
			t.Errorf("shared idle: %s, want 0.005", show(r.cost["kubecost_idle_cost"]))
		}
	})
	t.Run("cluster: idle next to unused", func(t *testing.T) {
		cd := query(t, db, "kubecost_bill_cluster_daily", "cluster_arn", "usage_date")
		r := cd[a+"|"+d1]
		if !pos(r, "kubecost_idle_cost") || !pos(r, "bill_unused_cost") {
			t.Errorf("A Day1: idle %s unused %s", show(r.cost["kubecost_idle_cost"]), show(r.cost["bill_unused_cost"]))
		}
		var idle float64
		for _, k := range kc {
			if n, isIdle := kubecostNamespace(k); isIdle && n == "__idle__" && k.clusterID == a && date(k.day) == d1 {
				idle += k.cpu + k.ram + k.gpu
			}
		}
		if *r.cost["kubecost_idle_cost"] != idle {
			t.Errorf("A Day1 idle %s, want the __idle__ rows' %.4f", show(r.cost["kubecost_idle_cost"]), idle)
		}
	})
}
