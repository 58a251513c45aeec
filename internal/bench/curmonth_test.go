package bench

import (
	"context"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
)

// TestCURMonthOtherServices: the organisation's other services add Other
// lines per cluster line, and the bill's reader skips every one of them:
// its sums are those of the same month without them.
func TestCURMonthOtherServices(t *testing.T) {
	m := CURMonth{Clusters: 2, Namespaces: 2, PodsPerNamespace: 5, PodsPerNode: 5, Days: 2,
		LinesPerFile: 3000, RowGroupRows: 700, Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}
	read := func(other int) (int64, *bill.Summary) {
		m.Other = other
		dir := t.TempDir()
		lines, err := m.writeCUR(dir)
		if err != nil {
			t.Fatal(err)
		}
		store, err := dirstore.New(dir, dirstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := bill.Read(context.Background(), bill.Options{Store: store, Prefix: "bench-cur/"})
		if err != nil {
			t.Fatal(err)
		}
		return lines, s
	}
	plainLines, plain := read(0)
	orgLines, org := read(3)
	if orgLines != 4*plainLines || plainLines != int64(m.Days*24*m.Clusters*(2*m.pods()+m.nodes())) {
		t.Errorf("%d lines with the other services, %d without", orgLines, plainLines)
	}
	if len(org.Rows) == 0 || len(org.Rows) != len(plain.Rows) {
		t.Fatalf("%d keys with the other services, %d without", len(org.Rows), len(plain.Rows))
	}
	for k, p := range plain.Rows {
		if o := org.Rows[k]; o == nil || !curcheck.SameCosts(o, p) {
			t.Errorf("%+v: %+v with the other services, %+v without", k, o, p)
		}
	}
}
