//go:build cgo

package duckcheck_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// openDuck opens an in-memory DuckDB in UTC, as an Athena session is:
// DuckDB reads a UTC-adjusted Parquet timestamp as TIMESTAMPTZ, which
// date_trunc cuts in the session's zone.
func curOpenDuck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1) // one connection, so SET holds for every query
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	return db
}

// lineOf is the rules' projection of a fixture row, as the reader decodes
// it (a null string reads as "").
func curLineOf(r curfixture.Row) bill.Line {
	s := func(name, v string) string {
		for _, n := range r.NullStrings {
			if n == name {
				return ""
			}
		}
		return v
	}
	f := func(p *float64) bill.NullFloat {
		if p == nil {
			return bill.NullFloat{}
		}
		return bill.Float(*p)
	}
	return bill.Line{
		LineItemType: s(bill.ColLineItemType, r.LineItemType), Operation: s(bill.ColOperation, r.Operation),
		UsageType: s(bill.ColUsageType, r.UsageType), ResourceID: s(bill.ColResourceID, r.ResourceID),
		ParentResourceID: s(bill.ColParentResourceID, r.ParentResourceID), UsageStart: r.Start,
		SplitCost: f(r.SplitCost), UnusedCost: f(r.UnusedCost), NetSplitCost: f(r.NetSplit), NetUnusedCost: f(r.NetUnused),
		PublicOnDemandSplit: f(r.PODSplit), PublicOnDemandUnused: f(r.PODUnused), UnblendedCost: f(r.Unblended),
		NetUnblendedCost: f(r.NetUnblended), PublicOnDemand: f(r.PublicOnDemand), SPEffectiveCost: f(r.SPEffective),
		SPNetEffectiveCost: f(r.SPNetEffective),
	}
}

// edgeRows are random lines mixing every value the rules branch on: pod
// and non-pod operations, usage types of every kind and none, Spot,
// resource ids of every shape, null, 0, negative and positive costs.
func curEdgeRows(n int) []curfixture.Row {
	rng := rand.New(rand.NewPCG(43, 1))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	num := func() *float64 {
		switch rng.IntN(5) {
		case 0:
			return nil
		case 1:
			return curfixture.F(0)
		case 2:
			return curfixture.F(-0.25)
		}
		return curfixture.F(float64(rng.IntN(1000)) / 997)
	}
	day := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	rows := make([]curfixture.Row, n)
	for i := range rows {
		r := curfixture.Row{
			Operation:    pick("EKSPod-EC2", "FargatePod", "FargateTask", "ECSTask-EC2", "RunInstances", ""),
			UsageType:    pick("USE1-EKS-EC2-vCPU-Hours", "USE1-EKS-EC2-GB-Hours", "USE1-EKS-EC2-Accelerator-Hours", "USE1-Fargate-vCPU-Hours:perCPU", "USE1-Fargate-GB-Hours", "USE1-SpotFargate-GB-Hours", "USE1-EKS-EC2-Other", "USE1-BoxUsage:m5.xlarge", "Fargate-GB-Hours-x", ""),
			LineItemType: pick("Usage", "SavingsPlanCoveredUsage", "DiscountedUsage", "Tax", ""),
			ResourceID: pick(curfixture.PodID(curfixture.AccountA, "prod", "payments", "api"), curfixture.PodID(curfixture.AccountB, "prod", "ml", "x"),
				"arn:aws-cn:eks:cn-north-1:111122223333:pod/c/n/p/u", "arn:aws:eks:us-east-1:111122223333:pod/c/ns", "arn:aws:eks:us-east-1:111122223333:pod/c/ns/",
				"arn:x:eks:a:b:c:pod/c2/n2/p", "arn:aws:ecs:us-east-1:111122223333:task/c/t", "arn:aws:eks:us-east-1:1:podx/c/n/p", "i-0123", ""),
			ParentResourceID: pick("", "i-0123"),
			Start:            day.Add(time.Duration(rng.IntN(48)) * time.Hour),
			SplitCost:        num(), UnusedCost: num(), NetSplit: num(), NetUnused: num(), PODSplit: num(), PODUnused: num(),
			Unblended: num(), NetUnblended: num(), PublicOnDemand: num(), SPEffective: num(), SPNetEffective: num(),
		}
		if rng.IntN(8) == 0 {
			r.NullStrings = []string{pick(bill.ColParentResourceID, bill.ColResourceID, bill.ColOperation, bill.ColUsageType)}
		}
		if rng.IntN(30) == 0 {
			r.Start = time.Time{}
		}
		rows[i] = r
	}
	return rows
}

// TestRulesGoEqualsSQL evaluates every rule in Go and its SQL in DuckDB on
// every line of the canonical fixture and of random edge lines.
func TestRulesGoEqualsSQL(t *testing.T) {
	rows := append(curfixture.Canonical(), curEdgeRows(3000)...)
	path := filepath.Join(t.TempDir(), "lines.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := curfixture.WriteParquet(f, rows, curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	f.Close()

	rules := bill.Rules()
	var cols []string
	for _, r := range rules {
		cols = append(cols, fmt.Sprintf("%s AS %s", r.SQL, r.Name))
	}
	q := fmt.Sprintf("SELECT file_row_number, %s FROM read_parquet('%s', file_row_number = true) ORDER BY file_row_number", strings.Join(cols, ", "), path)
	res, err := curOpenDuck(t).Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer res.Close()
	n, pods, mismatches := 0, 0, 0
	for res.Next() {
		vals := make([]any, len(rules)+1)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := res.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		i := int(vals[0].(int64))
		l := curLineOf(rows[i])
		isPod := bill.IsPod(&l)
		if isPod {
			pods++
		}
		for j, r := range rules {
			podField := j > 0 && j <= 6 // account_id..pod: defined on pods only
			if podField && !isPod {
				continue
			}
			if g, s := r.Eval(&l), vals[j+1]; !curSameValue(g, s) {
				if mismatches++; mismatches <= 20 {
					t.Errorf("line %d %s: Go %v, SQL %v\n%+v", i, r.Name, g, s, rows[i])
				}
			}
		}
		n++
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(rows) || pods < 100 {
		t.Fatalf("%d lines compared (%d pods), want %d and many pods", n, pods, len(rows))
	}
}

// sameValue compares a rule's Go value with DuckDB's.
func curSameValue(g, s any) bool {
	switch g := g.(type) {
	case bool:
		b, ok := s.(bool)
		return ok && b == g || s == nil && !g // NULL in WHERE is false
	case string:
		if s == nil {
			return g == ""
		}
		str, ok := s.(string)
		return ok && str == g
	case bill.NullFloat:
		if s == nil {
			return !g.Valid
		}
		v, ok := s.(float64)
		return ok && g.Valid && curcheck.Near(v, g.V)
	case time.Time:
		if s == nil {
			return g.IsZero()
		}
		d, ok := s.(time.Time)
		return ok && d.Equal(g)
	}
	return false
}

// TestSummarySQLEqualsReaderAndNaive runs SummarySQL on DuckDB over the
// canonical export and compares it with the naive computation and with
// the Go reader.
func TestSummarySQLEqualsReaderAndNaive(t *testing.T) {
	dir, _ := curcheck.WriteCanonical(t, 5)
	table := fmt.Sprintf("read_parquet('%s', hive_partitioning = false)", filepath.Join(dir, curfixture.Export, "data", "*", "*.parquet"))
	q := bill.SummarySQL(table)
	res, err := curOpenDuck(t).Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer res.Close()
	sqlSum := &bill.Summary{Rows: map[bill.Key]*bill.Costs{}}
	cols, _ := res.Columns()
	if strings.Join(cols, ",") != strings.Join(bill.SummaryColumns(), ",") {
		t.Fatalf("columns %v, want %v", cols, bill.SummaryColumns())
	}
	for res.Next() {
		var k bill.Key
		var totals [bill.NumMeasures]float64
		c := &bill.Costs{}
		ptrs := []any{&k.Account, &k.Region, &k.Cluster, &k.ClusterARN, &k.Namespace, &k.Day}
		for m := range bill.NumMeasures {
			ptrs = append(ptrs, &totals[m])
			for kind := range bill.Kind(bill.NumKinds) {
				ptrs = append(ptrs, &c.ByKind[kind][m])
			}
		}
		ptrs = append(ptrs, &c.Lines)
		if err := res.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for m := range bill.NumMeasures {
			if !curcheck.Near(totals[m], c.Total(m)) {
				t.Errorf("%+v %s: total %v, kinds sum to %v", k, m, totals[m], c.Total(m))
			}
		}
		sqlSum.Rows[k] = c
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	t.Run("naive", func(t *testing.T) { curcheck.Equal(t, sqlSum, curfixture.Expected(curfixture.Canonical())) })
	t.Run("reader", func(t *testing.T) {
		got := curcheck.ReadDir(t, dir, time.Time{}, time.Time{})
		if len(got.Rows) != len(sqlSum.Rows) {
			t.Errorf("reader %d keys, SQL %d", len(got.Rows), len(sqlSum.Rows))
		}
		for k, c := range sqlSum.Rows {
			g := got.Rows[k]
			if g == nil {
				t.Errorf("reader lacks %+v", k)
				continue
			}
			if !curcheck.SameCosts(g, c) {
				t.Errorf("%+v: reader %+v, SQL %+v", k, *g, *c)
			}
		}
	})
}
