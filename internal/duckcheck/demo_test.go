//go:build cgo

package duckcheck_test

import (
	"bytes"
	"context"
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// demoLabels are the LABELS of `make demo`; cost_center is not among them.
const demoLabels = "app.kubernetes.io/name, team"

// runDemo runs what `make demo` runs (.ci/demo.sh): the simulator with seed
// 42 and the exporter with the demo's variables, into a temp directory,
// in-process. It returns the directory.
func runDemo(t *testing.T) string {
	t.Helper()
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	sim := kubecostsim.NewServer(kubecostsim.Config{Seed: 42, ClusterName: "demo-cluster", RetentionDays: 30,
		Now: func() time.Time { return now }})
	t.Cleanup(sim.Close)
	out := t.TempDir()
	env := map[string]string{
		"OUTPUT_DIR":            out,
		"CLUSTER_ID":            "arn:aws:eks:us-east-1:111122223333:cluster/demo",
		"KUBECOST_API_ENDPOINT": sim.URL,
		"LABELS":                demoLabels,
		"ANNOTATIONS":           "owner",
		"BACKFILL_PERIOD_DAYS":  "5",
		"LOG_FORMAT":            "json",
	}
	var logs bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if code := cli.RunWith(context.Background(), lookup, &logs, cli.Hooks{Now: func() time.Time { return now }}); code != cli.ExitOK {
		t.Fatalf("demo run exit %d\n%s", code, logs.String())
	}
	return out
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("no Parquet files under %s: %v", dir, err)
	}
	return out
}

// TestLabelNotInLABELS queries the demo output with DuckDB for a label that
// was never listed in LABELS, sums cost by it, and checks the sums against
// arrow-go's reading of the same files. The query is the DuckDB spelling of
// the README's Athena query (element_at on the map column).
func TestLabelNotInLABELS(t *testing.T) {
	dir := runDemo(t)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	glob := filepath.ToSlash(filepath.Join(dir, "**", "*.parquet"))

	// The label is not a column: only the map has it.
	var cols int
	if err := db.QueryRow(`SELECT count(*) FROM (DESCRIBE SELECT * FROM read_parquet(?)) WHERE column_name = 'properties.labels.cost_center'`, glob).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if cols != 0 {
		t.Fatal("cost_center is a column; pick a label not in LABELS")
	}
	rows, err := db.Query(`
		SELECT coalesce(element_at("properties.labels", 'cost_center')[1], '(none)') AS cost_center,
		       sum(totalCost), count(*)
		FROM read_parquet(?)
		GROUP BY 1 ORDER BY 1`, glob)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	duck := map[string]float64{}
	var n int64
	for rows.Next() {
		var cc string
		var sum float64
		var c int64
		if err := rows.Scan(&cc, &sum, &c); err != nil {
			t.Fatal(err)
		}
		duck[cc], n = sum, n+c
		t.Logf("cost_center %-22s %10.2f  (%d rows)", cc, sum, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(duck) < 3 {
		t.Fatalf("cost by cost_center: %v, want several teams' cost centres", duck)
	}

	// The same sums read with arrow-go, an independent reader.
	arrow := map[string]float64{}
	var rowsArrow int64
	for _, p := range files(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := pqcheck.OpenBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		labels, err := f.Values("properties.labels")
		if err != nil {
			t.Fatal(err)
		}
		costs, err := f.Doubles("totalCost")
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range labels {
			cc := "(none)"
			if m, ok := l.([]pqcheck.Entry); ok {
				for _, e := range m {
					if e.Key == "cost_center" {
						cc = e.Value.(string)
					}
				}
			}
			arrow[cc] += costs[i]
		}
		rowsArrow += f.NumRows
		f.Close()
	}
	if n != rowsArrow || len(arrow) != len(duck) {
		t.Fatalf("DuckDB: %d rows in %d groups; arrow-go: %d rows in %d groups", n, len(duck), rowsArrow, len(arrow))
	}
	for cc, want := range arrow {
		if got := duck[cc]; math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("cost_center %s: DuckDB %.6f, arrow-go %.6f", cc, got, want)
		}
	}
}

// TestNestedColumnsInSQL reads the list and struct columns with DuckDB:
// services, namespace labels, volumes and peaks are queryable as such.
func TestNestedColumnsInSQL(t *testing.T) {
	dir := runDemo(t)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	glob := filepath.ToSlash(filepath.Join(dir, "**", "*.parquet"))
	var withServices, withPeaks, volumes int64
	var nsTeams int64
	var pvCost, pvCostColumn float64
	err = db.QueryRow(`
		SELECT count(*) FILTER (WHERE len("properties.services") > 0),
		       count(*) FILTER (WHERE rawAllocationOnly.cpuCoreUsageMax IS NOT NULL),
		       coalesce(sum(cardinality(pvs)), 0),
		       count(DISTINCT element_at("properties.namespaceLabels", 'team')[1]),
		       coalesce(sum(list_sum(list_transform(map_values(pvs), v -> v.cost))), 0),
		       sum(pvCost) FILTER (WHERE pvs IS NOT NULL)
		FROM read_parquet(?)`, glob).Scan(&withServices, &withPeaks, &volumes, &nsTeams, &pvCost, &pvCostColumn)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows with services, %d with peaks, %d volumes, %d namespace teams, volume cost %.4f (pvCost %.4f)",
		withServices, withPeaks, volumes, nsTeams, pvCost, pvCostColumn)
	if withServices == 0 || withPeaks == 0 || volumes == 0 || nsTeams < 2 {
		t.Errorf("nested columns not readable or empty")
	}
	if math.Abs(pvCost-pvCostColumn) > 1e-6*math.Max(1, pvCostColumn) {
		t.Errorf("per-volume costs sum to %.6f, pvCost to %.6f", pvCost, pvCostColumn)
	}
}
