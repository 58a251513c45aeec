package dashboards_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

var now = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// expand does what Grafana and the Athena plugin do to a query before
// sending it: variables and the $__timeFilter macro.
func expand(sql, label string) string {
	sql = regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`).ReplaceAllString(sql,
		"$1 BETWEEN TIMESTAMP '2026-10-01 00:00:00' AND TIMESTAMP '2026-12-01 00:00:00'")
	return strings.NewReplacer(
		"${database}", "main", "${view}", "kubecost_view",
		"${cluster:singlequote}", "'prod'", "${label}", label,
	).Replace(sql)
}

// TestQueriesRunOnTheView runs every query of the dashboard, expanded as
// Grafana would, on DuckDB (standing in for Athena) over a view shaped like
// the pipeline module's, on files the exporter wrote from the simulator.
// Each must succeed and return rows.
func TestQueriesRunOnTheView(t *testing.T) {
	sim := kubecostsim.NewServer(kubecostsim.Config{Seed: 7, RetentionDays: 5, Now: func() time.Time { return now }})
	t.Cleanup(sim.Close)
	dir := t.TempDir()
	env := map[string]string{
		"OUTPUT_DIR": dir, "CLUSTER_ID": "arn:aws:eks:us-east-1:111122223333:cluster/prod",
		"KUBECOST_API_ENDPOINT": sim.URL, "LABELS": "app", "LOG_FORMAT": "json",
	}
	var logs bytes.Buffer
	if code := cli.RunWith(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		&logs, cli.Hooks{Now: func() time.Time { return now }}); code != cli.ExitOK {
		t.Fatalf("export: exit %d\n%s", code, logs.String())
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The view lists the columns by their lowercased names, as the
	// pipeline module's view does.
	var cols []string
	d := schema.Describe([]string{"app"}, nil)
	for _, c := range append(d.Columns, d.PartitionKeys...) {
		cols = append(cols, fmt.Sprintf("%q AS %q", c.Name, strings.ToLower(c.Name)))
	}
	view := fmt.Sprintf("CREATE VIEW kubecost_view AS SELECT %s FROM read_parquet('%s', hive_partitioning = true, hive_types_autocast = false)",
		strings.Join(cols, ", "), filepath.Join(dir, "**", "*.parquet"))
	if _, err := db.Exec(view); err != nil {
		t.Fatalf("create view: %v", err)
	}

	dash := load(t)
	ran := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			q := expand(tg.RawSQL, "app")
			rows, err := db.Query(q)
			if err != nil {
				t.Errorf("panel %q: %v\n%s", p.Title, err, q)
				continue
			}
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Err(); err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
			}
			rows.Close()
			if n == 0 {
				t.Errorf("panel %q returned no rows:\n%s", p.Title, q)
			}
			ran++
		}
	}
	if ran < 20 {
		t.Errorf("ran %d queries", ran)
	}
}
