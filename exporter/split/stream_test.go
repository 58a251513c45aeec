package split_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/splittest"
)

// shifted is a random fixture moved to day d of cluster c, so that fixtures
// can be put together into several cluster-days.
func shifted(rng *rand.Rand, d int, c split.Cluster, billed split.Bill, scad split.SCADNet) []split.Alloc {
	allocs, b, s := randFixture(rng)
	at := day.AddDate(0, 0, d)
	for i := range allocs {
		allocs[i].Day, allocs[i].Cluster = at, c
	}
	for k, v := range b.Resources {
		k.Day = at
		billed.Resources[k] = v
	}
	for k, v := range s {
		k.Day, k.Cluster = at, c
		scad[k] += v
	}
	return allocs
}

// TestSplitterByClusterDay: splitting a fixture of several cluster-days
// one cluster-day at a time (split.Splitter, as the report reads the
// archive) and summing the parts' steps (NamespaceStepsOn, SCAD given
// once, with the bill-only rows) gives Split's rows and NamespaceSteps'
// steps over the whole fixture.
func TestSplitterByClusterDay(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 4))
	other := split.Cluster{Account: cl.Account, Region: cl.Region, ARN: cl.ARN + "-b", Name: cl.Name + "-b"}
	for iter := range 100 {
		billed := split.Bill{Resources: map[bill.ResourceKey]*bill.ResourceCost{}, Parents: map[bill.ParentKey]*bill.ParentCost{}}
		scad := split.SCADNet{}
		var parts [][]split.Alloc
		for d := range 3 {
			parts = append(parts, shifted(rng, d, cl, billed, scad))
		}
		// A second cluster on day 0: its node ids are the first cluster's,
		// so the bill's resource-days are shared and used once.
		parts = append(parts, shifted(rng, 0, other, billed, scad))
		// An instance only SCAD names: a bill-only row.
		pk := bill.ParentKey{Account: cl.Account, Region: cl.Region, InstanceID: "i-billonly", Day: day}
		billed.Parents[pk] = &bill.ParentCost{ClusterARN: cl.ARN, Cluster: cl.Name}
		billed.Resources[rk("i-billonly", bill.KindInstance)] = &bill.ResourceCost{Amortized: 1, Net: 0.9, PublicOnDemand: 1.2}

		var all []split.Alloc
		for _, p := range parts {
			all = append(all, p...)
		}
		wantRows := splittest.Split(all, billed)
		want := splittest.NamespaceSteps(wantRows, scad)

		sp := split.NewSplitter(billed)
		on := scad.On()
		got := map[split.Key]*split.Steps{}
		var rows []split.Row
		add := func(steps map[split.Key]*split.Steps) {
			for k, s := range steps {
				if got[k] == nil {
					got[k] = &split.Steps{}
				}
				got[k].Add(s)
			}
		}
		for _, p := range parts {
			r := sp.Add(p)
			rows = append(rows, r...)
			add(split.NamespaceStepsOn(r, nil, on))
		}
		r := sp.BillOnly()
		rows = append(rows, r...)
		add(split.NamespaceStepsOn(r, scad, on))

		splittest.Sort(rows)
		if len(rows) != len(wantRows) {
			t.Fatalf("iter %d: %d rows by parts, %d whole", iter, len(rows), len(wantRows))
		}
		for i := range rows {
			if fmt.Sprint(rows[i]) != fmt.Sprint(wantRows[i]) {
				t.Fatalf("iter %d row %d: %+v, want %+v", iter, i, rows[i], wantRows[i])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("iter %d: %d namespace-days by parts, %d whole", iter, len(got), len(want))
		}
		for k, w := range want {
			g := got[k]
			if g == nil || !near(g.Kubecost, w.Kubecost) || !near(g.Pricing, w.Pricing) || !near(g.Discounts, w.Discounts) ||
				!near(g.Negotiated, w.Negotiated) || !near(g.SplitBill, w.SplitBill) || !near(g.IdleSpread, w.IdleSpread) ||
				!near(g.SplitWeights, w.SplitWeights) || !near(g.SCAD, w.SCAD) || !near(g.SplitBillAmortized, w.SplitBillAmortized) ||
				!near(g.ListPriced, w.ListPriced) {
				t.Fatalf("iter %d %+v: by parts %+v, whole %+v", iter, k, g, w)
			}
		}
	}
}
