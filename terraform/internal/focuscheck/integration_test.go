//go:build cgo

package focuscheck

import (
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/parquetout"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/billcheck"
)

// archivePod is one allocation of the integration archive: a pod (or the
// node's __idle__ row) on a node whose providerID is an instance of
// curfixture.Canonical, with its costs and its volume's cost.
type archivePod struct {
	account, clusterID string
	day                time.Time
	node, instance     string
	namespace, pod     string
	cpu, ram, pv       float64
}

// integrationArchive is the Kubecost side of curfixture.Canonical's
// instances: two pods and the idle of the RI node on Day1 and Day2 (one
// with the gp3 volume's claim), the GPU node's pod and idle on Day1 and
// account B's node on Day1.
func integrationArchive() []archivePod {
	a, b := curfixture.AccountA, curfixture.AccountB
	ca, cb := curfixture.ClusterA, curfixture.ClusterB
	var out []archivePod
	for _, d := range []time.Time{curfixture.Day1, curfixture.Day2} {
		out = append(out,
			archivePod{a, ca, d, "ip-ri", curfixture.InstRI, "payments", "api-1", 0.30, 0.10, 0.02},
			archivePod{a, ca, d, "ip-ri", curfixture.InstRI, "payments", "worker-1", 0.15, 0.05, 0},
			archivePod{a, ca, d, "ip-ri", curfixture.InstRI, "__idle__", "", 0.20, 0.05, 0})
	}
	return append(out,
		archivePod{a, ca, curfixture.Day1, "ip-gpu", curfixture.InstGPU, "ml", "trainer-1", 1.20, 0.30, 0},
		archivePod{a, ca, curfixture.Day1, "ip-gpu", curfixture.InstGPU, "__idle__", "", 0.40, 0.10, 0},
		archivePod{b, cb, curfixture.Day1, "ip-b", curfixture.InstB, "payments", "api-1", 0.08, 0.02, 0})
}

// writeIntegrationArchive writes pods as the exporter does: one file per
// cluster and day at exporter.Layout's key, with the exporter's writer.
func writeIntegrationArchive(t *testing.T, dir string, pods []archivePod) {
	t.Helper()
	byFile := map[string][]archivePod{}
	var order []string
	for _, p := range pods {
		k := p.clusterID + "|" + p.day.Format(time.DateOnly)
		if _, ok := byFile[k]; !ok {
			order = append(order, k)
		}
		byFile[k] = append(byFile[k], p)
	}
	for _, k := range order {
		rs := byFile[k]
		first := rs[0]
		pr := schema.NewProjection(first.clusterID, curfixture.ClusterName, nil, nil)
		l := exporter.Layout{Account: first.account, Region: curfixture.Region, Cluster: curfixture.ClusterName}
		path := filepath.Join(dir, filepath.FromSlash(l.Key(first.day, exporter.Snappy)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := parquetout.NewWriter(out, pr, parquetout.Options{PageBufferDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		rec := pr.NewRecord()
		for _, p := range rs {
			pr.Reset(rec)
			rec.Name = strings.Join([]string{curfixture.ClusterName, p.node, p.namespace, p.pod}, "/")
			rec.Start, rec.End = p.day.UnixMilli(), p.day.Add(24*time.Hour).UnixMilli()
			for name, v := range map[string]float64{"cpuCost": p.cpu, "ramCost": p.ram, "pvCost": p.pv, "totalCost": p.cpu + p.ram + p.pv} {
				rec.Num[schema.DoubleIndex(name)] = v
			}
			rec.Props[schema.PropNamespace], rec.Props[schema.PropNode], rec.Props[schema.PropPod] = p.namespace, p.node, p.pod
			rec.Props[schema.PropProviderID] = "aws:///us-east-1a/" + p.instance
			if p.namespace != "__idle__" {
				rec.Props[schema.PropControllerKind], rec.Props[schema.PropController] = "deployment", strings.TrimSuffix(p.pod, "-1")
			}
			if p.pv > 0 {
				x := &rec.X[schema.XPVs]
				var e schema.Entry
				e.Key = "cluster=prod:name=pv-0"
				e.Fields[pqcheck.FieldIndex(schema.XPVs, "providerID")] = schema.Opt{Str: curfixture.Volume, Set: true}
				e.Fields[pqcheck.FieldIndex(schema.XPVs, "cost")] = schema.Opt{Num: p.pv, Set: true}
				x.Set, x.Entries = true, append(x.Entries, e)
			}
			pr.Finish(rec)
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// focusOfCUR is the AWS FOCUS 1.2 export of the same bill as the CUR
// rows: each resource-level usage line (instance hours, volume, load
// balancer; pod lines, fees and negations are not resource usage) becomes
// one FOCUS line of the same account, region, resource id and hour,
// mapped as AWS's FOCUS table dictionary
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-focus-1-2-aws.html)
// maps CUR 2.0:
//   - BilledCost = line_item_unblended_cost, except that a Savings Plan
//     covered hour is billed 0 (its SavingsPlanNegation cancels the
//     unblended cost on the invoice);
//   - EffectiveCost = the amortized cost of exporter/bill's rule
//     (cid-framework summary_view): savings_plan_savings_plan_effective_cost
//     for SavingsPlanCoveredUsage, reservation_effective_cost for
//     DiscountedUsage, otherwise unblended;
//   - ListCost = ContractedCost = pricing_public_on_demand_cost;
//   - PricingUnit: Hours for instance hours, GB for data transfer, GB-Mo
//     for volumes.
func focusOfCUR(rows []curfixture.Row) []curfixture.FocusRow {
	var out []curfixture.FocusRow
	v := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	for _, r := range rows {
		if r.ResourceID == "" || r.ParentResourceID != "" || r.Start.IsZero() || strings.HasPrefix(r.Operation, "EKSPod") ||
			strings.HasPrefix(r.Operation, "FargatePod") {
			continue
		}
		billed, eff := v(r.Unblended), v(r.Unblended)
		switch r.LineItemType {
		case "Usage":
		case "SavingsPlanCoveredUsage":
			billed, eff = 0, v(r.SPEffective)
		case "DiscountedUsage":
			eff = v(r.RIEffective)
		default:
			continue
		}
		service, unit := "Amazon Elastic Compute Cloud", "Hours"
		switch {
		case strings.HasPrefix(r.ResourceID, "vol-"):
			unit = "GB-Mo"
		case strings.Contains(r.UsageType, "DataTransfer"):
			// AWS prices data transfer per GB, which is how FOCUS tells an
			// instance's transfer from its hours (bill.FocusKindOf).
			unit = "GB"
		}
		if r.ProductCode == "AWSELB" {
			service = "Elastic Load Balancing"
		}
		f := curfixture.FocusLine(r.AccountID, r.ResourceID, service, r.UsageType, r.Start, v(r.PublicOnDemand), billed, eff)
		f.RegionId, f.AvailabilityZone, f.RegionName = curfixture.S(r.RegionCode), curfixture.S(r.RegionCode+"a"), curfixture.S("US East (N. Virginia)")
		f.PricingUnit, f.ConsumedUnit, f.XServiceCode, f.XOperation = curfixture.S(unit), curfixture.S(unit), curfixture.S(r.ProductCode), curfixture.S(r.Operation)
		q := r.UsageAmount
		f.PricingQuantity, f.ConsumedQuantity = &q, &q
		if r.UsageAmount != 0 {
			p := v(r.PublicOnDemand) / r.UsageAmount
			f.ListUnitPrice, f.ContractedUnitPrice, f.PricingCurrencyListUnitPrice, f.PricingCurrencyContractedUnitPrice = &p, &p, &p, &p
		}
		out = append(out, f)
	}
	return out
}

// openIntegrationFrom builds the bill module's real split views over the
// archive and curfixture.Canonical, the FOCUS export of the same bill, and
// the FOCUS views over both; with fromCUR the FOCUS views read the CUR's
// own origin charges (gen.FocusOriginCURSQL) instead of the export.
// The fixture's CUR has no payer, currency or period end
// columns; cur.cur2_focus adds them as a single account's bill in USD has
// them (each account pays its own bill).
func openIntegrationFrom(t *testing.T, fromCUR bool) (*sql.DB, map[string]View, []curfixture.FocusRow) {
	t.Helper()
	archive, export, focus := t.TempDir(), t.TempDir(), t.TempDir()
	writeIntegrationArchive(t, archive, integrationArchive())
	rows := curfixture.Canonical()
	if _, err := curfixture.WriteExport(export, curfixture.Export, rows, curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	fr := focusOfCUR(rows)
	if _, err := curfixture.WriteFocusExport(focus, curfixture.FocusExport, fr); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := billcheck.CreateViews(db, filepath.Join(moduleDir(t), "..", "bill"), archive, export); err != nil {
		t.Fatal(err)
	}
	if fromCUR {
		if _, err := db.Exec(`CREATE VIEW cur.cur2_focus AS SELECT *, line_item_usage_account_id AS bill_payer_account_id,
			'USD' AS line_item_currency_code, bill_billing_period_start_date + INTERVAL 1 MONTH AS bill_billing_period_end_date FROM cur.cur2`); err != nil {
			t.Fatal(err)
		}
		views, err := CreateOverCUR(db, moduleDir(t), "cur", "cur2_focus")
		if err != nil {
			t.Fatal(err)
		}
		return db, views, fr
	}
	views, err := CreateOverSplit(db, moduleDir(t), focus)
	if err != nil {
		t.Fatal(err)
	}
	return db, views, fr
}

func scalar(t *testing.T, db *sql.DB, q string) float64 {
	t.Helper()
	var x sql.NullFloat64
	if err := db.QueryRow(q).Scan(&x); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return x.Float64
}

// TestFocusOverRealSplit runs the FOCUS views over the bill module's own
// kubecost_bill_split_daily on curfixture.Canonical and an archive of its
// instances, with the FOCUS export of the same bill: every check passes,
// each matched origin's allocated charges sum to it, the replaced view's
// total is the export's, and the split's amortized cost per resource-day
// is the FOCUS origin's EffectiveCost.
func TestFocusOverRealSplit(t *testing.T) {
	t.Run("FOCUS export", func(t *testing.T) { focusOverRealSplit(t, false) })
	t.Run("CUR origins", func(t *testing.T) { focusOverRealSplit(t, true) })
}

func focusOverRealSplit(t *testing.T, fromCUR bool) {
	db, views, fr := openIntegrationFrom(t, fromCUR)
	focus, replaced := `main."`+views["focus"].Name+`"`, `main."`+views["focus_replaced"].Name+`"`
	ran := 0
	for _, kind := range Kinds {
		for _, r := range Run(db, Relations{`main."` + views[kind].Name + `"`, ExportTable, SplitTable, kind == "focus_replaced"}) {
			if r.Failed() {
				t.Errorf("%s: %s: %d violations %v", views[kind].Name, r.ID, r.Violations, r.Err)
			}
			ran++
		}
	}
	t.Logf("%d FOCUS 1.3 checks ran on the two views", ran)
	if n := scalar(t, db, "SELECT count(DISTINCT ResourceId) FROM "+focus); n < 3 {
		t.Errorf("%v origins allocated, want the RI, GPU and B instances at least", n)
	}
	// Each matched origin: allocated BilledCost, EffectiveCost and ListCost sum to the export's.
	for _, c := range []string{"BilledCost", "EffectiveCost", "ListCost"} {
		q := `SELECT count(*) FROM (SELECT ResourceId, CAST(ChargePeriodStart AS DATE) d, x_ResourceKind k, SUM(` + c + `) s FROM ` + focus +
			` GROUP BY ALL) a JOIN (SELECT ResourceId, CAST(ChargePeriodStart AS DATE) d, ` + bill.FocusKindSQL("") + ` k, SUM(` + c + `) s FROM ` + ExportTable +
			` GROUP BY ALL) o USING (ResourceId, d, k) WHERE abs(a.s - o.s) > 1e-9 * greatest(1, abs(o.s))`
		if n := scalar(t, db, q); n != 0 {
			t.Errorf("%s: %v origins whose allocated charges do not sum to the origin", c, n)
		}
		joined := strings.Replace(q, " WHERE abs(a.s - o.s) > 1e-9 * greatest(1, abs(o.s))", "", 1)
		if n := scalar(t, db, joined); n < 6 {
			t.Errorf("%s: only %v allocated origins found in the export", c, n)
		}
	}
	// The export's total: the fixture's own lines (summed in Go) for a
	// FOCUS export; for CUR origins, the resource usage lines the CUR's
	// rules pick, which the split's amortized costs must also sum to.
	total := scalar(t, db, "SELECT SUM(EffectiveCost) FROM "+ExportTable)
	if !fromCUR {
		var fromRows float64
		for _, r := range fr {
			fromRows += *r.EffectiveCost
		}
		if math.Abs(fromRows-total) > 1e-9*math.Max(1, total) {
			t.Errorf("the export's EffectiveCost %v on DuckDB, %v in its rows", total, fromRows)
		}
	} else if days := scalar(t, db, "SELECT SUM(amortized_cost) FROM ("+bill.ResourceDaySQL("cur.cur2")+") AS r"); math.Abs(days-total) > 1e-9*math.Max(1, total) {
		t.Errorf("the CUR origins' EffectiveCost %v, exporter/bill's resource-days %v", total, days)
	}
	if got := scalar(t, db, "SELECT SUM(EffectiveCost) FROM "+replaced); math.Abs(got-total) > 1e-9*math.Max(1, total) {
		t.Errorf("replaced view's EffectiveCost %v, the export's %v", got, total)
	}
	// The split's per resource-day amortized cost (matched rows) is _focus's origin charge.
	q := `SELECT count(*), coalesce(max(abs(s.c - f.c)), 0) FROM (SELECT resource_id, usage_date, resource_kind, SUM(amortized_cost) c FROM ` + SplitTable +
		` WHERE present_in <> 'kubecost_only' AND resource_id IS NOT NULL GROUP BY ALL) s JOIN (SELECT ResourceId, CAST(ChargePeriodStart AS DATE) d, x_ResourceKind k, SUM(EffectiveCost) c FROM ` +
		focus + ` GROUP BY ALL) f ON s.resource_id = f.ResourceId AND s.usage_date = f.d AND s.resource_kind = f.k`
	var n int64
	var worst float64
	if err := db.QueryRow(q).Scan(&n, &worst); err != nil {
		t.Fatal(err)
	}
	if worst > 1e-9 {
		r, err := db.Query(strings.Replace(q, "SELECT count(*), coalesce(max(abs(s.c - f.c)), 0)", "SELECT s.resource_id, CAST(s.usage_date AS VARCHAR), s.resource_kind, s.c, f.c", 1))
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			var id, d, k string
			var sc, fc float64
			if err := r.Scan(&id, &d, &k, &sc, &fc); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s %s: split %v, _focus %v", id, d, k, sc, fc)
		}
		r.Close()
	}
	if n == 0 || worst > 1e-9 {
		t.Errorf("split against _focus: %d resource-days, worst difference %v", n, worst)
	}
	t.Logf("%d resource-days of the split equal _focus's origins (worst %.3g)", n, worst)
}
