//go:build cgo

package billcheck_test

import (
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/billcheck"
)

// openViews writes the two fixtures and creates the views on DuckDB over
// them (CreateViews).
func openViews(t *testing.T, kc []kcRow, cur []curfixture.Row) *sql.DB {
	t.Helper()
	return openViewsWith(t, kc, cur, nil)
}

// openViewsWith is openViews with each view's SQL edited first.
func openViewsWith(t *testing.T, kc []kcRow, cur []curfixture.Row, edit func(kind, sql string) string) *sql.DB {
	t.Helper()
	archive, export := t.TempDir(), t.TempDir()
	writeArchive(t, archive, kc)
	if _, err := curfixture.WriteExport(export, curfixture.Export, cur, curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1) // one session: SET TimeZone applies to every query
	if _, err := billcheck.CreateViewsWith(db, "../../modules/bill", archive, export, edit); err != nil {
		t.Fatal(err)
	}
	return db
}

// costCols are the numeric columns of every bill view, in order.
var costCols = []string{
	"kubecost_cpu_cost", "kubecost_ram_cost", "kubecost_gpu_cost", "kubecost_compute_cost", "kubecost_idle_cost",
	"kubecost_pv_cost", "kubecost_network_cost", "kubecost_load_balancer_cost", "kubecost_only_cost",
	"kubecost_shared_cost", "kubecost_total_cost",
	"bill_split_cost", "bill_unused_cost", "bill_cost", "bill_net_split_cost", "bill_net_unused_cost", "bill_net_cost",
	"bill_cpu_cost", "bill_memory_cost", "bill_gpu_cost", "bill_public_on_demand_cost",
	"kubecost_cost", "pricing_step", "discounts_step", "negotiated_step", "split_bill_cost",
	"idle_spread_step", "split_weights_step", "scad_cost", "split_bill_amortized_cost", "list_priced_cost",
}

// viewRow is a row of a view: its key, present_in and nullable costs.
type viewRow struct {
	presentIn string
	cost      map[string]*float64
}

// query reads a view keyed by the given key columns joined with "|".
func query(t *testing.T, db *sql.DB, view string, keyCols ...string) map[string]viewRow {
	t.Helper()
	var sel []string
	for _, k := range keyCols {
		sel = append(sel, "CAST("+k+" AS VARCHAR)")
	}
	q := fmt.Sprintf("SELECT %s, present_in, %s FROM main.%q", strings.Join(sel, ", "), strings.Join(costCols, ", "), view)
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", view, err)
	}
	defer rows.Close()
	out := map[string]viewRow{}
	for rows.Next() {
		keys := make([]string, len(keyCols))
		nums := make([]sql.NullFloat64, len(costCols))
		var present string
		dest := []any{}
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		dest = append(dest, &present)
		for i := range nums {
			dest = append(dest, &nums[i])
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		r := viewRow{presentIn: present, cost: map[string]*float64{}}
		for i, c := range costCols {
			if nums[i].Valid {
				v := nums[i].Float64
				r.cost[c] = &v
			}
		}
		k := strings.Join(keys, "|")
		if _, dup := out[k]; dup {
			t.Errorf("%s: two rows for %s", view, k)
		}
		out[k] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func date(d time.Time) string { return d.Format(time.DateOnly) }

// TestBillViewsEqualGo runs the three views on DuckDB over the fixtures
// and compares every row and column with the straight Go computation of
// expect.go: same keys, same present_in, same numbers, same nulls.
func TestBillViewsEqualGo(t *testing.T) {
	kc, cur := archiveRows(), curfixture.Canonical()
	db := openViews(t, kc, cur)
	_, steps := expectSplit(t, kc, cur)
	ns := expectNamespaces(kc, cur, steps)
	for name, got := range map[string]map[string]viewRow{
		"namespace_daily": query(t, db, "kubecost_bill_namespace_daily", "cluster_arn", "namespace", "usage_date"),
		"cluster_daily":   query(t, db, "kubecost_bill_cluster_daily", "cluster_arn", "usage_date"),
		"cluster_monthly": query(t, db, "kubecost_bill_cluster_monthly", "cluster_arn", "billing_period"),
	} {
		want := ns
		switch name {
		case "cluster_daily":
			want = rollUp(ns, func(k string) string { p := strings.Split(k, "|"); return p[0] + "|" + p[2] })
		case "cluster_monthly":
			want = rollUp(ns, func(k string) string { p := strings.Split(k, "|"); return p[0] + "|" + p[2][:7] })
		}
		compare(t, name, got, want)
	}

	// The test's own loops agree with curfixture's naive computation of
	// the bill side, written apart from them.
	for k, e := range curfixture.Expected(cur) {
		w, ok := ns[k.ClusterARN+"|"+k.Namespace+"|"+date(k.Day)]
		if !ok {
			t.Errorf("curfixture expects %v, the test's loops have no such row", k)
			continue
		}
		sum := func(a [3]float64) float64 { return a[0] + a[1] + a[2] }
		for c, v := range map[string]float64{"bill_split_cost": sum(e.Split), "bill_unused_cost": sum(e.Unused),
			"bill_net_split_cost": sum(e.NetSplit), "bill_net_unused_cost": sum(e.NetUnused),
			"bill_public_on_demand_cost": sum(e.PublicOnDemandSplit) + sum(e.PublicOnDemandUnused)} {
			if g := w.cost[c]; g == nil || math.Abs(*g-v) > 1e-9 {
				t.Errorf("%v %s: the test's loops say %s, curfixture.Expected %.9f", k, c, show(g), v)
			}
		}
	}
}

func compare(t *testing.T, view string, got, want map[string]viewRow) {
	t.Helper()
	for _, d := range diffRows(view, got, want) {
		t.Error(d)
	}
}

// diffRows lists every difference between a view's rows and the expected.
func diffRows(view string, got, want map[string]viewRow) []string {
	var out []string
	errorf := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w := want[k]
		g, ok := got[k]
		if !ok {
			errorf("%s: no row %s (want %s)", view, k, w.presentIn)
			continue
		}
		if g.presentIn != w.presentIn {
			errorf("%s %s: present_in %s, want %s", view, k, g.presentIn, w.presentIn)
		}
		for _, c := range costCols {
			gv, wv := g.cost[c], w.cost[c]
			switch {
			case (gv == nil) != (wv == nil):
				errorf("%s %s %s: %s, want %s", view, k, c, show(gv), show(wv))
			case gv != nil && math.Abs(*gv-*wv) > 1e-9:
				errorf("%s %s %s: %.9f, want %.9f", view, k, c, *gv, *wv)
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			errorf("%s: unexpected row %s", view, k)
		}
	}
	return out
}

func show(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%.9f", *v)
}
