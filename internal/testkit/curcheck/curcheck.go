// Package curcheck compares what exporter/bill reads (or what SQL rendered
// from its rules returns, loaded into a bill.Summary) with curfixture's
// naive sums, for the tests of the reader, of the views and of the
// report.
package curcheck

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// WriteCanonical writes curfixture.Canonical as the export
// curfixture.Export under a temp dir, rowGroupRows lines per row group
// (0: one per file), and returns the dir and the keys written.
func WriteCanonical(t testing.TB, rowGroupRows int64) (dir string, keys []string) {
	t.Helper()
	dir = t.TempDir()
	keys, err := curfixture.WriteExport(dir, curfixture.Export, curfixture.Canonical(), curfixture.Options{RowGroupRows: rowGroupRows})
	if err != nil {
		t.Fatal(err)
	}
	return dir, keys
}

// ReadDir reads the export curfixture.Export under dir with bill.Read
// through a directory store, for the UTC days from..to (zero: open).
func ReadDir(t testing.TB, dir string, from, to time.Time) *bill.Summary {
	t.Helper()
	store, err := dirstore.New(dir, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := bill.Read(context.Background(), bill.Options{Store: store, Prefix: curfixture.Export + "/", From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Near is equality of sums up to float rounding (1e-9 relative).
func Near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)+math.Abs(b)) }

// Equal reports every difference between a summary and the naive sums,
// key by key, both ways.
func Equal(t testing.TB, got *bill.Summary, want map[curfixture.ExpectKey]*curfixture.Expect) {
	t.Helper()
	if len(got.Rows) != len(want) {
		t.Errorf("%d keys, want %d", len(got.Rows), len(want))
	}
	for k, c := range got.Rows {
		w := want[curfixture.ExpectKey{ClusterARN: k.ClusterARN, Namespace: k.Namespace, Day: k.Day}]
		if w == nil {
			t.Errorf("unexpected key %+v", k)
			continue
		}
		if c.Lines != int64(w.Lines) {
			t.Errorf("%+v: %d lines, want %d", k, c.Lines, w.Lines)
		}
		wm := [bill.NumMeasures]*[3]float64{&w.Split, &w.Unused, &w.NetSplit, &w.NetUnused, &w.PublicOnDemandSplit, &w.PublicOnDemandUnused}
		for m := range bill.NumMeasures {
			for kind := range bill.Kind(bill.NumKinds) {
				if g, e := c.ByKind[kind][m], wm[m][kind]; !Near(g, e) {
					t.Errorf("%s/%s %s %s_%s: %v, want %v", k.ClusterARN, k.Namespace, k.Day.Format(time.DateOnly), m, kind, g, e)
				}
			}
		}
	}
}

// SameCosts reports whether two keys' costs are equal up to rounding.
func SameCosts(a, b *bill.Costs) bool {
	for k := range a.ByKind {
		for m := range a.ByKind[k] {
			if !Near(a.ByKind[k][m], b.ByKind[k][m]) {
				return false
			}
		}
	}
	return a.Lines == b.Lines
}
