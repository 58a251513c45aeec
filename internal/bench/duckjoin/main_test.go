//go:build cgo

package main

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// TestJoin runs the join over a synthetic export with other services'
// lines and a Savings Plan negation in it, against the same sums done
// here with loops: per instance and UTC day, the instance's amortized cost
// (covered usage at its effective cost, negations 0, the rest unblended)
// and its pods' split + unused cost, over the instance-days both have.
func TestJoin(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	s := curfixture.Synthetic{Clusters: 2, PodsPerCluster: 20, Days: 2, Start: start}
	var rows []curfixture.Row
	other := &curfixture.OtherServices{Resources: 5}
	if err := s.Each(func(r curfixture.Row) error {
		rows = append(rows, r)
		if r.Operation == "RunInstances" {
			neg := r
			neg.LineItemType, neg.Unblended = "SavingsPlanNegation", curfixture.F(-*r.Unblended)
			rows = append(rows, neg, other.Line(r.AccountID, len(rows), r.Start))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type key struct {
		id  string
		day time.Time
	}
	inst, pods := map[key]float64{}, map[key]float64{}
	for _, r := range rows {
		day := r.Start.Truncate(24 * time.Hour)
		switch {
		case r.Operation == "EKSPod-EC2":
			pods[key{r.ParentResourceID, day}] += *r.SplitCost + *r.UnusedCost
		case r.Operation == "RunInstances" && r.LineItemType != "SavingsPlanNegation":
			inst[key{r.ResourceID, day}] += *r.Unblended
		}
	}
	var want joined
	for k, p := range pods {
		if c, ok := inst[k]; ok {
			want.instanceDays++
			want.pods += p
			want.instances += c
		}
	}
	dir := t.TempDir()
	if _, err := curfixture.WriteExport(dir, "x", rows, curfixture.Options{RowGroupRows: 1000}); err != nil {
		t.Fatal(err)
	}
	got, err := join(filepath.Join(dir, "**", "*.parquet"), "TRUE", 1)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if got.instanceDays != want.instanceDays || want.instanceDays == 0 || !near(got.pods, want.pods) || !near(got.instances, want.instances) {
		t.Errorf("join %+v, want %+v", got, want)
	}
}
