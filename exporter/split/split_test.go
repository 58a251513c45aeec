package split_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/splittest"
)

var (
	day = time.Date(2026, 1, 14, 0, 0, 0, 0, time.UTC)
	cl  = split.Cluster{Account: "111122223333", Region: "us-east-1", ARN: "arn:aws:eks:us-east-1:111122223333:cluster/prod", Name: "prod"}
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)+math.Abs(b)) }

func rk(id, kind string) bill.ResourceKey {
	return bill.ResourceKey{Account: cl.Account, Region: cl.Region, ResourceID: id, Kind: kind, Day: day}
}

// TestSplitByHand: one node, two pods and its idle row; compute shares
// 3:1 of CPU+RAM+GPU (pod b's share is its GPU), idle its own row; a
// volume two claims share 1:3; a node the bill lacks; an instance only
// SCAD names; a volume no PV names whose tag names the cluster.
func TestSplitByHand(t *testing.T) {
	node := "ip-10-0-0-1"
	allocs := []split.Alloc{
		{Cluster: cl, Day: day, Node: node, ProviderID: "aws:///us-east-1a/i-aaa", Namespace: "payments", Controller: "api", Pod: "api-1",
			Compute: 3, Network: 1, PVs: []split.PV{{ProviderID: "aws://us-east-1a/vol-111", Cost: 0.25}}},
		{Cluster: cl, Day: day, Node: node, ProviderID: "aws:///us-east-1a/i-aaa", Namespace: "ml", Pod: "b", Compute: 1, Network: 0,
			PVs: []split.PV{{ProviderID: "vol-111", Cost: 0.75}}},
		{Cluster: cl, Day: day, Node: node, Idle: true, Compute: 4},
		{Cluster: cl, Day: day, Node: "fargate-ip-1", ProviderID: "", Namespace: "batch", Pod: "job", Compute: 0.5, LoadBalancer: 0.2},
		{Cluster: cl, Day: day, Node: "ip-10-0-0-2", ProviderID: "i-bbb", Namespace: "monitoring", Pod: "m", Compute: 0.7},
	}
	billed := split.Bill{
		Resources: map[bill.ResourceKey]*bill.ResourceCost{
			rk("i-aaa", bill.KindInstance):     {Amortized: 8, Net: 6, PublicOnDemand: 10},
			rk("i-aaa", bill.KindDataTransfer): {Amortized: 2, Net: 2, PublicOnDemand: 2},
			rk("vol-111", bill.KindVolume):     {Amortized: 4, Net: 4, PublicOnDemand: 4, Cluster: cl.Name},
			// Tagged with the cluster, in no PV: bill-only; tagged with a
			// cluster the archive lacks: no row.
			rk("vol-222", bill.KindVolume): {Amortized: 0.5, Net: 0.4, PublicOnDemand: 0.5, Cluster: cl.Name},
			rk("vol-333", bill.KindVolume): {Amortized: 0.7, Net: 0.7, PublicOnDemand: 0.7, Cluster: "other"},
			rk("i-ccc", bill.KindInstance): {Amortized: 1, Net: 0.9, PublicOnDemand: 1.5},
		},
		Parents: map[bill.ParentKey]*bill.ParentCost{
			{Account: cl.Account, Region: cl.Region, InstanceID: "i-ccc", Day: day}: {ClusterARN: cl.ARN, Cluster: cl.Name},
		},
	}
	rows := splittest.Split(allocs, billed)
	type want struct {
		share, amortized float64
		present          string
	}
	got := map[string]want{}
	for _, r := range rows {
		got[fmt.Sprintf("%s/%s/%s/%v", r.Kind, r.ResourceID, r.Namespace, r.Idle)] = want{r.Share, r.Amortized.V, r.PresentIn}
	}
	for k, w := range map[string]want{
		"instance/i-aaa/payments/false":                       {3.0 / 8, 3, split.Both},
		"instance/i-aaa/ml/false":                             {1.0 / 8, 1, split.Both},
		"instance/i-aaa/" + schema.IdleName + "/true":         {4.0 / 8, 4, split.Both},
		"data_transfer/i-aaa/payments/false":                  {1, 2, split.Both},
		"data_transfer/i-aaa/ml/false":                        {0, 0, split.Both},
		"volume/vol-111/payments/false":                       {0.25, 1, split.Both},
		"volume/vol-111/ml/false":                             {0.75, 3, split.Both},
		"instance//batch/false":                               {1, 0, split.KubecostOnly},
		"load_balancer//batch/false":                          {1, 0, split.KubecostOnly},
		"instance/i-bbb/monitoring/false":                     {1, 0, split.KubecostOnly},
		"instance/i-ccc/" + schema.UnallocatedName + "/false": {1, 1, split.BillOnly},
		"volume/vol-222/" + schema.UnallocatedName + "/false": {1, 0.5, split.BillOnly},
	} {
		g, ok := got[k]
		if !ok || !near(g.share, w.share) || !near(g.amortized, w.amortized) || g.present != w.present {
			t.Errorf("%s: %+v (found %v), want %+v", k, g, ok, w)
		}
	}
	if len(rows) != 13 { // the idle row's data transfer too
		t.Errorf("%d rows, want 13: %+v", len(rows), rows)
	}
	steps := splittest.NamespaceSteps(rows, nil)
	p := steps[split.Key{Cluster: cl, Namespace: "payments", Day: day}]
	// payments: instance 3/8 of (10, 8, 6), data transfer all of 2, volume 1/4 of 4.
	w := split.Steps{Kubecost: 3 + 1 + 0.25, SplitBillAmortized: 3 + 2 + 1, SplitBill: 2.25 + 2 + 1}
	w.Pricing = 3.75 + 2 + 1 - w.Kubecost
	w.Discounts = w.SplitBillAmortized - (3.75 + 2 + 1)
	w.Negotiated = w.SplitBill - w.SplitBillAmortized
	w.SCAD = w.SplitBill
	if *p != w {
		t.Errorf("payments steps %+v, want %+v", *p, w)
	}
	if b := steps[split.Key{Cluster: cl, Namespace: "batch", Day: day}]; b.ListPriced != 0.7 || b.Kubecost != 0 {
		t.Errorf("batch: %+v, want 0.7 list-priced and nothing in the steps", *b)
	}
}

// TestIdleSpread: with SCAD on, the idle row's net goes to the pods by
// their shares, and split weights close the gap to SCAD.
func TestIdleSpread(t *testing.T) {
	allocs := []split.Alloc{
		{Cluster: cl, Day: day, Node: "n", ProviderID: "i-aaa", Namespace: "a", Pod: "a", Compute: 1},
		{Cluster: cl, Day: day, Node: "n", ProviderID: "i-aaa", Namespace: "b", Pod: "b", Compute: 3},
		{Cluster: cl, Day: day, Node: "n", Idle: true, Compute: 4},
	}
	billed := split.Bill{Resources: map[bill.ResourceKey]*bill.ResourceCost{rk("i-aaa", bill.KindInstance): {Amortized: 8, Net: 8, PublicOnDemand: 8}}}
	scad := split.SCADNet{{Cluster: cl, Namespace: "a", Day: day}: 3, {Cluster: cl, Namespace: "b", Day: day}: 5}
	st := splittest.NamespaceSteps(splittest.Split(allocs, billed), scad)
	a, b, idle := st[split.Key{Cluster: cl, Namespace: "a", Day: day}], st[split.Key{Cluster: cl, Namespace: "b", Day: day}], st[split.Key{Cluster: cl, Namespace: schema.IdleName, Day: day}]
	if !near(a.IdleSpread, 1) || !near(b.IdleSpread, 3) || !near(idle.IdleSpread, -4) {
		t.Errorf("idle spread a %v b %v idle %v, want 1, 3, -4", a.IdleSpread, b.IdleSpread, idle.IdleSpread)
	}
	if !near(a.SplitWeights, 3-1-1) || !near(b.SplitWeights, 5-3-3) || !near(idle.SplitWeights, 0) {
		t.Errorf("split weights a %v b %v idle %v", a.SplitWeights, b.SplitWeights, idle.SplitWeights)
	}
}

func randFixture(rng *rand.Rand) ([]split.Alloc, split.Bill, split.SCADNet) {
	billed := split.Bill{Resources: map[bill.ResourceKey]*bill.ResourceCost{}, Parents: map[bill.ParentKey]*bill.ParentCost{}}
	scad := split.SCADNet{}
	var allocs []split.Alloc
	money := func() float64 {
		if rng.IntN(6) == 0 {
			return 0
		}
		return rng.Float64() * 10
	}
	for n := range 2 + rng.IntN(6) {
		id := fmt.Sprintf("i-%04d", n)
		node := fmt.Sprintf("node-%d", n)
		if rng.IntN(4) > 0 {
			billed.Resources[rk(id, bill.KindInstance)] = &bill.ResourceCost{Amortized: money(), Net: money(), PublicOnDemand: money()}
		}
		if rng.IntN(2) == 0 {
			billed.Resources[rk(id, bill.KindDataTransfer)] = &bill.ResourceCost{Amortized: money(), Net: money(), PublicOnDemand: money()}
		}
		for p := range rng.IntN(5) {
			a := split.Alloc{Cluster: cl, Day: day, Node: node, ProviderID: "aws:///us-east-1a/" + id,
				Namespace: fmt.Sprintf("ns-%d", rng.IntN(3)), Pod: fmt.Sprintf("p-%d-%d", n, p), Compute: money(), Network: money()}
			if rng.IntN(3) == 0 {
				a.PVs = []split.PV{{ProviderID: fmt.Sprintf("vol-%d", rng.IntN(4)), Cost: money()}}
			}
			allocs = append(allocs, a)
			if rng.IntN(2) == 0 {
				scad[split.Key{Cluster: cl, Namespace: a.Namespace, Day: day}] += money()
			}
		}
		if rng.IntN(3) > 0 {
			allocs = append(allocs, split.Alloc{Cluster: cl, Day: day, Node: node, Idle: true, Compute: money()})
		}
	}
	for v := range 4 {
		if rng.IntN(3) > 0 {
			billed.Resources[rk(fmt.Sprintf("vol-%d", v), bill.KindVolume)] = &bill.ResourceCost{Amortized: money(), Net: money(), PublicOnDemand: money()}
		}
	}
	return allocs, billed, scad
}

// TestPropertySplitAddsUp: on random fixtures, every matched instance-day
// and volume-day is allocated whole (1e-9 relative), shares of one
// resource-day sum to 1, and the steps add up per namespace-day and
// cluster-day.
func TestPropertySplitAddsUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 1))
	matched := 0
	for iter := range 500 {
		allocs, billed, scad := randFixture(rng)
		rows := splittest.Split(allocs, billed)
		type res struct{ amortized, net, od, share float64 }
		sums := map[bill.ResourceKey]*res{}
		for _, r := range rows {
			if r.PresentIn == split.KubecostOnly {
				if r.Amortized.Valid {
					t.Fatalf("iter %d: kubecost-only row with a bill cost: %+v", iter, r)
				}
				continue
			}
			k := bill.ResourceKey{Account: r.Cluster.Account, Region: r.Cluster.Region, ResourceID: r.ResourceID, Kind: r.Kind, Day: r.Day}
			s := sums[k]
			if s == nil {
				s = &res{}
				sums[k] = s
			}
			s.amortized += r.Amortized.V
			s.net += r.Net.V
			s.od += r.PublicOnDemand.V
			s.share += r.Share
		}
		for k, s := range sums {
			c := billed.Resources[k]
			if c == nil || !near(s.amortized, c.Amortized) || !near(s.net, c.Net) || !near(s.od, c.PublicOnDemand) || !near(s.share, 1) {
				t.Fatalf("iter %d %+v: allocated %+v, bill %+v", iter, k, s, c)
			}
			matched++
		}
		ns := splittest.NamespaceSteps(rows, scad)
		for k, s := range ns {
			checkSteps(t, fmt.Sprintf("iter %d %s", iter, k.Namespace), s)
		}
		for k, s := range splittest.ClusterSteps(ns) {
			checkSteps(t, fmt.Sprintf("iter %d cluster %s", iter, k.Cluster.Name), s)
		}
	}
	if matched < 1000 {
		t.Fatalf("only %d matched resource-days checked", matched)
	}
}

func checkSteps(t *testing.T, what string, s *split.Steps) {
	t.Helper()
	if !near(s.Kubecost+s.Pricing+s.Discounts+s.Negotiated, s.SplitBill) ||
		!near(s.SplitBill+s.IdleSpread+s.SplitWeights, s.SCAD) ||
		!near(s.SplitBill-s.Negotiated, s.SplitBillAmortized) {
		t.Fatalf("%s: steps do not add up: %+v", what, *s)
	}
}

func TestIDs(t *testing.T) {
	for in, want := range map[string]string{"aws:///us-east-1a/i-0abc": "i-0abc", "i-0abc": "i-0abc", "": "", "i-": "", "aws:///x/vol-1": "",
		"fargate-ip-10-0-0-1": "", "k8s://node": ""} {
		if got := split.InstanceID(in); got != want {
			t.Errorf("InstanceID(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"aws://us-east-1a/vol-0abc": "vol-0abc", "vol-1": "vol-1", "pv-x": ""} {
		if got := split.VolumeID(in); got != want {
			t.Errorf("VolumeID(%q) = %q, want %q", in, got, want)
		}
	}
}
