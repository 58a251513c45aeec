package bill_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

var synthStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func writeSynthetic(tb testing.TB, s curfixture.Synthetic) (path string, lines int64) {
	tb.Helper()
	path = filepath.Join(tb.TempDir(), "synthetic.parquet")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if lines, err = curfixture.WriteSynthetic(f, s); err != nil {
		tb.Fatal(err)
	}
	return path, lines
}

func readFile(tb testing.TB, path string, from, to time.Time) *bill.Summary {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	a := bill.NewAggregator(from, to)
	if err := a.ReadFile(context.Background(), f, st.Size()); err != nil {
		tb.Fatal(err)
	}
	return a.Summary()
}

// TestSyntheticEqualsNaive: the generated export, which spans several
// batches and row groups, reads as the naive sums of its rows, and a day
// of it decodes only that day's row groups.
func TestSyntheticEqualsNaive(t *testing.T) {
	s := curfixture.Synthetic{Clusters: 2, PodsPerCluster: 30, Days: 3, Start: synthStart, RowGroupRows: 1000}
	var rows []curfixture.Row
	if err := s.Each(func(r curfixture.Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	path, n := writeSynthetic(t, s)
	all := readFile(t, path, time.Time{}, time.Time{})
	curcheck.Equal(t, all, curfixture.Expected(rows))
	if all.Stats.Lines != n || n != int64(len(rows)) || all.Stats.PodLines != 2*30*3*24*2 {
		t.Errorf("stats %+v, %d lines written", all.Stats, n)
	}
	day := synthStart.AddDate(0, 0, 1)
	one := readFile(t, path, day, day)
	t.Logf("all days: %d of %d row groups decoded; one day: %d", all.Stats.RowGroups-all.Stats.RowGroupsSkipped, all.Stats.RowGroups, one.Stats.RowGroups-one.Stats.RowGroupsSkipped)
	if decoded := one.Stats.RowGroups - one.Stats.RowGroupsSkipped; decoded > all.Stats.RowGroups/3+1 {
		t.Errorf("one day of three decoded %d of %d row groups", decoded, all.Stats.RowGroups)
	}
}

// BenchmarkReadMonth reads a generated month: CUR_BENCH_PODS pods per
// cluster (default 30; the month is 300) in 10 clusters over 30
// days, with cpu and memory lines. It reports wall and CPU ns per line
// and allocations.
func BenchmarkReadMonth(b *testing.B) {
	pods := 30
	if v, err := strconv.Atoi(os.Getenv("CUR_BENCH_PODS")); err == nil && v > 0 {
		pods = v
	}
	s := curfixture.Synthetic{Clusters: 10, PodsPerCluster: pods, Days: 30, Start: synthStart, RowGroupRows: 128 * 1024}
	path, lines := writeSynthetic(b, s)
	fi, _ := os.Stat(path)
	b.Logf("%d lines, %d bytes", lines, fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	var keys int
	cpu0 := cpuTime()
	for b.Loop() {
		keys = len(readFile(b, path, time.Time{}, time.Time{}).Rows)
	}
	// CPU time includes the GC's background work on the other core.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(int64(b.N)*lines), "cpu-ns/line")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*lines), "ns/line")
	b.ReportMetric(float64(keys), "keys")
}
