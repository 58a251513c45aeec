//go:build cgo

package billcheck_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// randomSplitFixture draws an archive and a bill that share nodes,
// instances and volumes at random: nodes with and without instances,
// lines or idle rows, pods with network and volumes, instance,
// data-transfer and volume lines under every amortized case, SCAD pod
// lines on some nodes (so some cluster-days have SCAD and some not), and
// instances only the bill's SCAD lines name.
func randomSplitFixture(seed uint64) ([]kcRow, []curfixture.Row) {
	rng := rand.New(rand.NewPCG(seed, 46))
	money := func() float64 {
		if rng.IntN(7) == 0 {
			return 0
		}
		return float64(rng.IntN(10000)) / 997
	}
	f := curfixture.F
	var kc []kcRow
	var cur []curfixture.Row
	days := []time.Time{curfixture.Day1, curfixture.Day2}
	clusters := []struct{ account, arn string }{{curfixture.AccountA, curfixture.ClusterA}, {curfixture.AccountB, curfixture.ClusterB}}
	for ci, c := range clusters {
		for n := range 2 + rng.IntN(4) {
			inst := fmt.Sprintf("i-%02d%04x", ci, n)
			node := fmt.Sprintf("node-%d", n)
			pid := []string{"aws:///us-east-1a/" + inst, inst, ""}[rng.IntN(3)]
			for _, day := range days {
				if rng.IntN(5) == 0 {
					continue
				}
				start := day.Add(time.Duration(rng.IntN(20)) * time.Hour)
				for p := range rng.IntN(4) {
					ns := []string{"payments", "ml", "search"}[rng.IntN(3)]
					r := kcRow{account: c.account, region: curfixture.Region, clusterID: c.arn, cluster: curfixture.ClusterName, day: day,
						name: fmt.Sprintf("prod/%s/%s/p%d/c", node, ns, p), namespace: ns, node: node, providerID: pid, pod: fmt.Sprintf("p%d", p),
						controller: "ctl", controllerKind: "deployment", cpu: money(), ram: money(), gpu: money() * float64(rng.IntN(2)),
						network: money() * float64(rng.IntN(2)), lb: money() * float64(rng.IntN(4)/3)}
					for v := range rng.IntN(3) {
						r.pvs = append(r.pvs, pvEntry{[]string{fmt.Sprintf("aws://us-east-1a/vol-%d%d", ci, v), fmt.Sprintf("vol-%d%d", ci, v), "nfs-x"}[rng.IntN(3)], money(), -money() / 10})
					}
					kc = append(kc, r)
					if rng.IntN(2) == 0 { // SCAD's line of the pod
						cur = append(cur, curfixture.EC2PodLine(c.account, ns, r.pod, inst, "cpu", start,
							curfixture.Cost{Split: f(money()), Unused: f(money()), NetSplit: f(money()), NetUnused: f(money())}))
					}
				}
				if rng.IntN(2) == 0 {
					kc = append(kc, kcRow{account: c.account, region: curfixture.Region, clusterID: c.arn, cluster: curfixture.ClusterName,
						day: day, name: "prod/" + node + "/__idle__", node: node, cpu: money(), ram: money()})
				}
				if rng.IntN(4) > 0 {
					typ := []string{"Usage", "DiscountedUsage", "SavingsPlanCoveredUsage"}[rng.IntN(3)]
					l := curfixture.Row{AccountID: c.account, LineItemType: typ, Operation: "RunInstances", ProductCode: "AmazonEC2",
						UsageType: []string{"USE1-BoxUsage:m5.large", "USE1-SpotUsage:m5.large"}[rng.IntN(2)], ResourceID: inst,
						Start: start, End: start.Add(time.Hour), UsageAmount: 1, RegionCode: curfixture.Region,
						Unblended: f(money()), NetUnblended: f(money() * float64(rng.IntN(2))), PublicOnDemand: f(money()),
						SPEffective: f(money()), SPNetEffective: f(money()), RIEffective: f(money()), RINetEffective: f(money())}
					cur = append(cur, l)
					if typ == "SavingsPlanCoveredUsage" {
						neg := l
						neg.LineItemType, neg.Unblended = "SavingsPlanNegation", f(-*l.Unblended)
						cur = append(cur, neg)
					}
				}
				if rng.IntN(2) == 0 {
					cur = append(cur, curfixture.Row{AccountID: c.account, LineItemType: "Usage", Operation: "RunInstances", ProductCode: "AWSDataTransfer",
						UsageType: "USE1-DataTransfer-Out-Bytes", ResourceID: inst, Start: start, End: start.Add(time.Hour), RegionCode: curfixture.Region,
						Unblended: f(money()), NetUnblended: f(money()), PublicOnDemand: f(money())})
				}
				for v := range 3 {
					if rng.IntN(3) == 0 {
						cur = append(cur, curfixture.Row{AccountID: c.account, LineItemType: "Usage", Operation: "CreateVolume-Gp3", ProductCode: "AmazonEC2",
							UsageType: "USE1-EBS:VolumeUsage.gp3", ResourceID: fmt.Sprintf("vol-%d%d", ci, v), Start: start, End: start.Add(time.Hour),
							RegionCode: curfixture.Region, Unblended: f(money()), NetUnblended: f(money()), PublicOnDemand: f(money())})
					}
				}
			}
		}
	}
	return kc, cur
}

// TestSplitViewsEqualGoRandom: on random fixtures, split_daily equals
// exporter/split row by row, namespace_daily's steps equal
// splittest.NamespaceSteps, and in every row of the namespace, cluster and
// month views the steps add up (1e-9).
func TestSplitViewsEqualGoRandom(t *testing.T) {
	rowsSeen := 0
	for seed := range uint64(6) {
		kc, rows := randomSplitFixture(seed)
		db := openViews(t, kc, rows)
		want, steps := expectSplit(t, kc, rows)
		rowsSeen += len(want)
		seen := map[string]int{}
		for _, r := range want {
			seen[r.Kind+"/"+r.PresentIn]++
		}
		t.Logf("seed %d: %d archive rows, %d CUR lines, split rows %v", seed, len(kc), len(rows), seen)
		for _, d := range diffSplit(querySplit(t, db), goSplit(want)) {
			t.Errorf("seed %d: %s", seed, d)
		}
		ns := query(t, db, "kubecost_bill_namespace_daily", "cluster_arn", "namespace", "usage_date")
		for k, s := range steps {
			g, ok := ns[k]
			if !ok {
				t.Errorf("seed %d: namespace_daily has no row %s", seed, k)
				continue
			}
			w := viewRow{cost: map[string]*float64{}}
			setSteps(&w, s)
			for _, c := range stepCols {
				if !nearPtr(g.cost[c], w.cost[c]) {
					t.Errorf("seed %d %s %s: view %s, Go %s", seed, k, c, show(g.cost[c]), show(w.cost[c]))
				}
			}
		}
		for view, keys := range map[string][]string{"kubecost_bill_namespace_daily": {"cluster_arn", "namespace", "usage_date"},
			"kubecost_bill_cluster_daily": {"cluster_arn", "usage_date"}, "kubecost_bill_cluster_monthly": {"cluster_arn", "billing_period"}} {
			for k, r := range query(t, db, view, keys...) {
				v := func(c string) float64 { return *r.cost[c] } // never null
				if !near(v("kubecost_cost")+v("pricing_step")+v("discounts_step")+v("negotiated_step"), v("split_bill_cost")) ||
					!near(v("split_bill_cost")+v("idle_spread_step")+v("split_weights_step"), v("scad_cost")) {
					t.Errorf("seed %d %s %s: steps do not add up: %v", seed, view, k, fmtSteps(r))
				}
			}
		}
	}
	if rowsSeen < 200 {
		t.Fatalf("only %d split rows drawn", rowsSeen)
	}
}

func fmtSteps(r viewRow) string {
	var b strings.Builder
	for _, c := range stepCols {
		fmt.Fprintf(&b, "%s=%s ", c, show(r.cost[c]))
	}
	return b.String()
}
