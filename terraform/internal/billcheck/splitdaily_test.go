//go:build cgo

package billcheck_test

import (
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/splittest"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

// splitVals are a split_daily row's values (nil = null).
type splitVals struct {
	share, kubecost                float64
	publicOnDemand, amortized, net *float64
	basis, present                 string
}

func splitKey(arn, day, kind, id, node, ns, ck, c, pod string, idle bool) string {
	return strings.Join([]string{arn, day, kind, id, node, ns, ck, c, pod, fmt.Sprint(idle)}, "|")
}

func querySplit(t *testing.T, db *sql.DB) map[string]splitVals {
	t.Helper()
	rows, err := db.Query(`SELECT cluster_arn, CAST(usage_date AS VARCHAR), resource_kind, COALESCE(resource_id, '<null>'), node, namespace,
		controller_kind, controller, pod, is_idle, share, kubecost_cost, public_on_demand_cost, amortized_cost, net_cost, price_basis, present_in
		FROM main.kubecost_bill_split_daily`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]splitVals{}
	for rows.Next() {
		var arn, day, kind, id, node, ns, ck, c, pod string
		var idle bool
		var v splitVals
		var od, am, net sql.NullFloat64
		if err := rows.Scan(&arn, &day, &kind, &id, &node, &ns, &ck, &c, &pod, &idle, &v.share, &v.kubecost, &od, &am, &net, &v.basis, &v.present); err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			n *sql.NullFloat64
			d **float64
		}{{&od, &v.publicOnDemand}, {&am, &v.amortized}, {&net, &v.net}} {
			if p.n.Valid {
				x := p.n.Float64
				*p.d = &x
			}
		}
		k := splitKey(arn, day, kind, id, node, ns, ck, c, pod, idle)
		if _, dup := out[k]; dup {
			t.Errorf("split_daily: two rows %s", k)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func goSplit(rows []split.Row) map[string]splitVals {
	out := map[string]splitVals{}
	ptr := func(f bill.NullFloat) *float64 {
		if !f.Valid {
			return nil
		}
		return &f.V
	}
	for _, r := range rows {
		id := r.ResourceID
		if id == "" {
			id = "<null>"
		}
		out[splitKey(r.Cluster.ARN, date(r.Day), r.Kind, id, r.Node, r.Namespace, r.ControllerKind, r.Controller, r.Pod, r.Idle)] = splitVals{
			share: r.Share, kubecost: r.KubecostCost, publicOnDemand: ptr(r.PublicOnDemand), amortized: ptr(r.Amortized), net: ptr(r.Net),
			basis: r.PriceBasis, present: r.PresentIn}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)+math.Abs(b)) }

func nearPtr(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || near(*a, *b)) }

func diffSplit(got, want map[string]splitVals) []string {
	var out []string
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w := want[k]
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, "split_daily: no row "+k)
		case !near(g.share, w.share) || !near(g.kubecost, w.kubecost) || !nearPtr(g.publicOnDemand, w.publicOnDemand) ||
			!nearPtr(g.amortized, w.amortized) || !nearPtr(g.net, w.net) || g.basis != w.basis || g.present != w.present:
			out = append(out, fmt.Sprintf("split_daily %s: %+v, want %+v", k, g, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "split_daily: unexpected row "+k)
		}
	}
	return out
}

// TestSplitDailyEqualsGo: the split view on DuckDB holds exporter/split's
// rows over the same files, row by row; the fixture covers every kind and
// every presence; every matched instance-day and volume-day of the view
// adds up to the bill's cost.
func TestSplitDailyEqualsGo(t *testing.T) {
	kc, rows := archiveRows(), curfixture.Canonical()
	db := openViews(t, kc, rows)
	got := querySplit(t, db)
	want, _ := expectSplit(t, kc, rows)
	for _, d := range diffSplit(got, goSplit(want)) {
		t.Error(d)
	}
	seen := map[string]int{}
	for _, r := range want {
		seen[r.Kind+"/"+r.PresentIn]++
	}
	for _, c := range []string{"instance/both", "instance/kubecost_only", "instance/bill_only", "volume/both", "volume/kubecost_only",
		"volume/bill_only", "data_transfer/both", "load_balancer/kubecost_only"} {
		if seen[c] == 0 {
			t.Errorf("the fixture has no %s row: %v", c, seen)
		}
	}
	// The volume the archive lacks, found by its cluster tag: one
	// bill-only row in the cluster's __unallocated__ at the bill's cost.
	var lost []split.Row
	for _, r := range want {
		if r.ResourceID == curfixture.VolumeLost {
			lost = append(lost, r)
		}
	}
	if len(lost) != 1 || lost[0].PresentIn != split.BillOnly || lost[0].Namespace != schema.UnallocatedName ||
		lost[0].Cluster.Name != curfixture.ClusterName || !near(lost[0].Amortized.V, 0.022) || !near(lost[0].Net.V, 0.0198) {
		t.Errorf("volume %s: %+v, want one bill_only row in %s's %s at 0.022 (net 0.0198)", curfixture.VolumeLost, lost, curfixture.ClusterName, schema.UnallocatedName)
	}
	// Every matched resource-day adds up to the bill (the bill's numbers
	// read by the Go reader).
	billed := billOf(t, rows)
	sums := map[bill.ResourceKey][3]float64{}
	for _, r := range want {
		if r.PriceBasis != split.BasisBill {
			continue
		}
		k := bill.ResourceKey{Account: r.Cluster.Account, Region: r.Cluster.Region, ResourceID: r.ResourceID, Kind: r.Kind, Day: r.Day}
		s := sums[k]
		s[0], s[1], s[2] = s[0]+r.Amortized.V, s[1]+r.Net.V, s[2]+r.Share
		sums[k] = s
	}
	for k, s := range sums {
		c := billed.Resources[k]
		if c == nil || !near(s[0], c.Amortized) || !near(s[1], c.Net) || !near(s[2], 1) {
			t.Errorf("%+v: allocated %v, bill %+v", k, s, c)
		}
	}
	if len(sums) < 6 {
		t.Errorf("only %d matched resource-days", len(sums))
	}
}

// TestSCADAgreesWithInstanceLines: with SCAD on, SCAD's pod lines of an
// instance-day (split + unused) hold the instance's own lines' amortized
// and net cost where the fixture's bill is consistent (the Savings Plan
// GPU node, B's on-demand node, the instance the archive lacks), and the
// check tells where it is not (the RI node, whose pod lines the fixture
// draws apart from its instance lines).
func TestSCADAgreesWithInstanceLines(t *testing.T) {
	checks := splittest.CheckSCAD(billOf(t, curfixture.Canonical()))
	byID := map[string]splittest.SCADCheck{}
	for _, c := range checks {
		t.Logf("%s %s %s: SCAD %.6f (net %.6f), instance %.6f (net %.6f), agree %v/%v", c.Key.Account, c.Key.InstanceID, date(c.Key.Day),
			c.SCAD, c.SCADNet, c.Instance, c.InstanceNet, c.Agree, c.NetAgree)
		byID[c.Key.InstanceID+"|"+date(c.Key.Day)] = c
	}
	for _, k := range []string{curfixture.InstGPU + "|2026-01-14", curfixture.InstB + "|2026-01-14", curfixture.InstLost + "|2026-01-15"} {
		if c, ok := byID[k]; !ok || !c.Agree || !c.NetAgree {
			t.Errorf("%s: %+v (found %v), want SCAD to agree with the instance lines", k, c, ok)
		}
	}
	if c := byID[curfixture.InstRI+"|2026-01-14"]; !c.HasInstance || c.Agree {
		t.Errorf("RI node: %+v, want a disagreement found", c)
	}
}

// TestViewColumnsFollowViewsJSON: every view's columns on DuckDB are
// views.json's (what Glue declares and QuickSight reads), in order, and
// the step columns are never null.
func TestViewColumnsFollowViewsJSON(t *testing.T) {
	views, err := gen.BillViews()
	if err != nil {
		t.Fatal(err)
	}
	db := openViews(t, archiveRows(), curfixture.Canonical())
	for _, v := range views {
		rows, err := db.Query(fmt.Sprintf("SELECT * FROM main.%q LIMIT 0", "kubecost_bill_"+v.Name))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := rows.Columns()
		rows.Close()
		var want []string
		for _, c := range v.Columns {
			want = append(want, c.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: DuckDB columns\n%v\nviews.json\n%v", v.Name, got, want)
		}
		if v.Name == "split_daily" {
			continue
		}
		for _, c := range stepCols {
			var nulls int
			if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM main.%q WHERE %s IS NULL", "kubecost_bill_"+v.Name, c)).Scan(&nulls); err != nil || nulls != 0 {
				t.Errorf("%s.%s: %d nulls (%v)", v.Name, c, nulls, err)
			}
		}
	}
}
