//go:build cgo

package billcheck_test

import (
	"bytes"
	"context"
	"database/sql"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/report"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/billcheck"
)

// reportNow is when the report test's archive is exported: its days are
// 2026-01-11..15, which hold the canonical fixture's Day1 and Day2.
var reportNow = time.Date(2026, 1, 18, 6, 0, 0, 0, time.UTC)

// reportFixtures exports an archive and writes a CUR 2.0 export the way a
// user's would be: the simulator's cluster prod in account A (archive and
// bill, the bill without the namespace kubecost, which is then Kubecost's
// only), another simulated prod in account B (archive only), and the
// canonical fixture's lines (Fargate, GPU, RI and Savings Plan net
// columns, nulls, lines that are not pods, a namespace only the bill has,
// B's payments on Day1). It returns the archive's and the export's
// directories.
func reportFixtures(t *testing.T) (archive, export string) {
	t.Helper()
	archive, export = t.TempDir(), t.TempDir()
	servers := map[string]*kubecostsim.Server{}
	for arn, seed := range map[string]int64{curfixture.ClusterA: 42, curfixture.ClusterB: 7} {
		srv := kubecostsim.NewServer(kubecostsim.Config{Seed: seed, ClusterName: curfixture.ClusterName, RetentionDays: 10,
			Now: func() time.Time { return reportNow }})
		servers[arn] = srv
		env := map[string]string{"OUTPUT_DIR": archive, "CLUSTER_ID": arn, "KUBECOST_API_ENDPOINT": srv.URL,
			"BACKFILL_PERIOD_DAYS": "5", "LOG_FORMAT": "json"}
		var logs bytes.Buffer
		code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &logs,
			cli.Hooks{Now: func() time.Time { return reportNow }})
		srv.Close()
		if code != cli.ExitOK {
			t.Fatalf("export %s: exit %d\n%s", arn, code, logs.String())
		}
	}
	var rows []curfixture.Row
	err := servers[curfixture.ClusterA].Sim.CURLines(context.Background(), kubecostsim.CUROptions{ClusterARN: curfixture.ClusterA}, func(r *curfixture.Row) error {
		if !strings.Contains(r.ResourceID, "/prod/kubecost/") {
			rows = append(rows, *r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := curfixture.WriteExport(export, "sim", rows, curfixture.Options{RowGroupRows: 4096}); err != nil {
		t.Fatal(err)
	}
	if _, err := curfixture.WriteExport(export, curfixture.Export, curfixture.Canonical(), curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	return archive, export
}

// archiveDays are the first and last day of the archive's files.
func archiveDays(t *testing.T, archive string) (from, to string) {
	t.Helper()
	err := filepath.WalkDir(archive, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		day := d.Name()[:len(time.DateOnly)]
		if from == "" || day < from {
			from = day
		}
		to = max(to, day)
		return nil
	})
	if err != nil || from == "" {
		t.Fatalf("no archive files: %v", err)
	}
	t.Logf("the archive's days: %s to %s", from, to)
	return from, to
}

// reportRow is a row of the report's section, from the page's attributes.
type reportRow struct {
	present                                        string
	kubecost, bill, only, split, unused, net, idle float64
}

var billDay = regexp.MustCompile(`<tr class="bill-day"((?: data-[a-z-]+="[^"]*")+)>`)
var dataAttr = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)

// reportSection runs `report -dir archive -cur export` as a user would and
// reads the section's per namespace and day rows, keyed as
// account|region|cluster|namespace|day.
func reportSection(t *testing.T, archive, export string) map[string]reportRow {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), []string{"report", "-dir", archive, "-cur", export, "-today", "2026-01-18", "-o", out},
		func(string) (string, bool) { return "", false }, &stdout, &stderr)
	if code != cli.ExitOK {
		t.Fatalf("report: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	t.Logf("report's summary:\n%s", stdout.String())
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]reportRow{}
	for _, m := range billDay.FindAllStringSubmatch(string(b), -1) {
		a := map[string]string{}
		for _, kv := range dataAttr.FindAllStringSubmatch(m[1], -1) {
			a[kv[1]] = html.UnescapeString(kv[2])
		}
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(a[k], 64)
			if err != nil {
				t.Fatalf("data-%s=%q: %v", k, a[k], err)
			}
			return v
		}
		k := strings.Join([]string{a["account"], a["region"], a["cluster"], a["namespace"], a["day"]}, "|")
		rows[k] = reportRow{present: a["present"], kubecost: num("kubecost"), bill: num("bill"), only: num("kubecost-only"),
			split: num("bill-split"), unused: num("bill-unused"), net: num("bill-net"), idle: num("kubecost-idle")}
	}
	if len(rows) == 0 {
		t.Fatalf("the page has no row of the section:\n%s", b)
	}
	return rows
}

// viewsOver creates the bill views as Terraform renders them on DuckDB
// over the archive's and the export's directories (billcheck.CreateViews).
func viewsOver(t *testing.T, archive, export string) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := billcheck.CreateViews(db, "../../modules/bill", archive, export); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestReportEqualsViews: the report's section "Kubecost and the bill",
// made by the command from the archive and the CUR export, holds the rows
// and numbers of the namespace_daily view that Terraform creates, run on
// DuckDB over the same files, for every cluster, namespace and day the
// report covers: present_in, Kubecost's compute, idle and what only it
// counts, the bill's split, unused and net cost, and the difference.
func TestReportEqualsViews(t *testing.T) {
	archive, export := reportFixtures(t)
	got := reportSection(t, archive, export)
	db := viewsOver(t, archive, export)
	view := query(t, db, "kubecost_bill_namespace_daily", "account_id", "region", "cluster_name", "namespace", "usage_date")

	from, to := archiveDays(t, archive) // the report covers the archive's days
	want := map[string]viewRow{}
	for k, r := range view {
		if day := k[strings.LastIndexByte(k, '|')+1:]; day >= from && day <= to {
			want[k] = r
		}
	}
	or0 := func(r viewRow, c string) float64 {
		if v := r.cost[c]; v != nil {
			return *v
		}
		return 0
	}
	counts := map[string]int{}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w := want[k]
		counts[w.presentIn]++
		g, ok := got[k]
		if !ok {
			t.Errorf("the report has no row %s (the view's is %s)", k, w.presentIn)
			continue
		}
		if g.present != w.presentIn {
			t.Errorf("%s: present in %s, the view says %s", k, g.present, w.presentIn)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"kubecost_compute_cost", g.kubecost, or0(w, "kubecost_compute_cost")},
			{"kubecost_idle_cost", g.idle, or0(w, "kubecost_idle_cost")},
			{"kubecost_only_cost", g.only, or0(w, "kubecost_only_cost")},
			{"bill_cost", g.bill, or0(w, "bill_cost")},
			{"bill_split_cost", g.split, or0(w, "bill_split_cost")},
			{"bill_unused_cost", g.unused, or0(w, "bill_unused_cost")},
			{"bill_net_cost", g.net, or0(w, "bill_net_cost")},
			{"kubecost_compute_cost - bill_cost", g.kubecost - g.bill, or0(w, "kubecost_compute_cost") - or0(w, "bill_cost")},
		} {
			if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
				t.Errorf("%s %s: report %.10f, view %.10f", k, c.name, c.got, c.want)
			}
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the report has a row %s (%s) the view has not", k, g.present)
		}
	}
	t.Logf("%d rows: %v", len(want), counts)
	reportStepsEqualView(t, archive, export, want)
	// The cases the fixtures are built for are all there: both sides,
	// each side alone, and the two clusters named prod kept apart.
	for _, p := range []string{"both", "kubecost_only", "bill_only"} {
		if counts[p] == 0 {
			t.Errorf("no row present in %s: the fixture lost a case", p)
		}
	}
	for _, k := range []string{
		curfixture.AccountA + "|us-east-1|prod|experiments|2026-01-15", // bill only
		curfixture.AccountA + "|us-east-1|prod|kubecost|2026-01-14",    // Kubecost only
		curfixture.AccountA + "|us-east-1|prod|__idle__|2026-01-14",
		curfixture.AccountB + "|us-east-1|prod|payments|2026-01-14", // B's payments has the canonical bill lines
	} {
		if _, ok := want[k]; !ok {
			t.Errorf("the view has no row %s", k)
		}
	}
}

// reportStepsEqualView: the report's comparison rows (report.Collect, as
// the command reads the same files) carry the view's waterfall steps.
func reportStepsEqualView(t *testing.T, archive, export string, view map[string]viewRow) {
	t.Helper()
	arch, err := dirstore.New(archive, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bill, err := dirstore.New(export, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := report.Collect(context.Background(), report.Options{Store: arch, Today: reportNow, TempDir: t.TempDir(),
		Bill: &report.Bill{Store: bill, Source: export}})
	if err != nil {
		t.Fatal(err)
	}
	n, moved := 0, 0.0
	for _, c := range d.Bill.Clusters {
		for _, r := range c.Daily {
			k := strings.Join([]string{c.Cluster.Account, c.Cluster.Region, c.Cluster.Name, r.Namespace, r.Day.Format(time.DateOnly)}, "|")
			w, ok := view[k]
			if !ok {
				t.Errorf("report row %s: no such view row", k)
				continue
			}
			s := r.Steps
			for _, x := range []struct {
				name string
				got  float64
			}{{"kubecost_cost", s.Kubecost}, {"pricing_step", s.Pricing}, {"discounts_step", s.Discounts}, {"negotiated_step", s.Negotiated},
				{"split_bill_cost", s.SplitBill}, {"idle_spread_step", s.IdleSpread}, {"split_weights_step", s.SplitWeights},
				{"scad_cost", s.SCAD}, {"split_bill_amortized_cost", s.SplitBillAmortized}, {"list_priced_cost", s.ListPriced}} {
				if v := w.cost[x.name]; v == nil || math.Abs(*v-x.got) > 1e-9*math.Max(1, math.Abs(*v)) {
					t.Errorf("%s %s: report %.10f, view %s", k, x.name, x.got, show(v))
				}
			}
			moved += math.Abs(s.Pricing) + math.Abs(s.Discounts) + math.Abs(s.SplitBill)
			n++
		}
	}
	if n != len(view) || moved == 0 {
		t.Errorf("%d report rows against %d view rows, |steps| %v", n, len(view), moved)
	}
}
