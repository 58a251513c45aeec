//go:build cgo

// Command duckjoin is the DuckDB side of `make bench-cur`
// (.ci/bench-cur.sh): over the same CUR 2.0 files the report reads, DuckDB
// sums each instance's own lines per resource-day at the amortized rule of
// the Cloud Intelligence Dashboards' summary_view (Savings Plan covered
// usage at its effective cost, negations 0, the rest unblended) and joins
// the pods' split and unused cost per parent instance and day, by
// namespace. It prints the join's size and totals and how long it took;
// GNU time around it gives the peak RSS. It needs cgo (DuckDB is linked
// from a static library), so it is not one of cmd/'s binaries.
//
//	duckjoin -cur DIR [-from YYYY-MM-DD -to YYYY-MM-DD] [-threads N]
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

// joinSQL: %[1]s is the files' glob, %[2]s the day filter.
const joinSQL = `
WITH lines AS (
  SELECT line_item_line_item_type AS typ, line_item_operation AS op, line_item_resource_id AS id,
    split_line_item_parent_resource_id AS parent, CAST(line_item_usage_start_date AS DATE) AS day,
    resource_tags['aws_eks_namespace'] AS ns, line_item_unblended_cost AS unblended,
    savings_plan_savings_plan_effective_cost AS sp_effective,
    split_line_item_split_cost AS split, split_line_item_unused_cost AS unused
  FROM read_parquet('%[1]s')
  WHERE %[2]s
),
instances AS (
  SELECT id, day, SUM(CASE typ WHEN 'SavingsPlanCoveredUsage' THEN sp_effective
                               WHEN 'SavingsPlanNegation' THEN 0 ELSE unblended END) AS amortized
  FROM lines WHERE op LIKE 'RunInstances%%' AND id LIKE 'i-%%' GROUP BY id, day
),
pods AS (
  SELECT parent, day, ns, SUM(COALESCE(split, 0) + COALESCE(unused, 0)) AS cost
  FROM lines WHERE op = 'EKSPod-EC2' GROUP BY parent, day, ns
),
per_instance AS (
  SELECT parent, day, SUM(cost) AS cost, COUNT(*) AS namespaces FROM pods GROUP BY parent, day
)
SELECT COUNT(*), SUM(p.namespaces), SUM(p.cost), SUM(i.amortized)
FROM per_instance p JOIN instances i ON i.id = p.parent AND i.day = p.day`

func main() {
	dir := flag.String("cur", "", "the export's directory")
	from := flag.String("from", "", "first UTC day (YYYY-MM-DD)")
	to := flag.String("to", "", "last UTC day")
	threads := flag.Int("threads", 0, "DuckDB threads (0: its default, the CPUs)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "duckjoin: -cur is required")
		os.Exit(2)
	}
	filter := "TRUE"
	if *from != "" && *to != "" {
		for _, d := range []string{*from, *to} {
			if _, err := time.Parse(time.DateOnly, d); err != nil {
				fmt.Fprintf(os.Stderr, "duckjoin: %v\n", err)
				os.Exit(2)
			}
		}
		filter = fmt.Sprintf("line_item_usage_start_date >= TIMESTAMP '%s' AND line_item_usage_start_date < TIMESTAMP '%s' + INTERVAL 1 DAY", *from, *to)
	}
	start := time.Now()
	if err := run(filepath.Join(*dir, "**", "*.parquet"), filter, *threads); err != nil {
		fmt.Fprintf(os.Stderr, "duckjoin: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("duckjoin: in %s\n", time.Since(start).Round(time.Millisecond))
}

// joined is the join's result.
type joined struct {
	instanceDays, rows int64
	pods, instances    float64
}

func run(glob, filter string, threads int) error {
	j, err := join(glob, filter, threads)
	if err != nil {
		return err
	}
	fmt.Printf("duckjoin: %d instance-days, %d instance-day-namespace rows, pods' split+unused %.2f, instances' amortized %.2f\n",
		j.instanceDays, j.rows, j.pods, j.instances)
	return nil
}

func join(glob, filter string, threads int) (joined, error) {
	var j joined
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return j, err
	}
	defer db.Close()
	if threads > 0 {
		if _, err := db.Exec(fmt.Sprintf("SET threads = %d", threads)); err != nil {
			return j, err
		}
	}
	var pods, instances sql.NullFloat64
	q := fmt.Sprintf(joinSQL, strings.ReplaceAll(glob, "'", "''"), filter)
	if err := db.QueryRow(q).Scan(&j.instanceDays, &j.rows, &pods, &instances); err != nil {
		return j, fmt.Errorf("join: %w", err)
	}
	j.pods, j.instances = pods.Float64, instances.Float64
	return j, nil
}
