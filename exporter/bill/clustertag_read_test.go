package bill_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// TestClusterTagReadLineByLine: resource_tags is a repeated leaf whose
// lines span batches and row groups; each volume line (its own id) reads
// back the least cluster its own keys name, none for a null or empty map.
// Row groups of 9000 lines: batches of 4096 end inside a group, so a
// batch's last line's keys are carried over (a group of at most 4096
// lines would be one batch and never carry).
func TestClusterTagReadLineByLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 3))
	day := time.Date(2026, 1, 14, 0, 0, 0, 0, time.UTC)
	keys := []string{bill.ClusterTagPrefix + "prod", bill.ClusterTagPrefix + "dev", bill.ClusterTagPrefix, "user_eks_cluster_name", "aws_eks_namespace"}
	rows := make([]curfixture.Row, 10000)
	want := map[string]string{}
	for i := range rows {
		id := fmt.Sprintf("vol-%06d", i)
		r := curfixture.Row{AccountID: curfixture.AccountA, LineItemType: "Usage", ProductCode: "AmazonEC2", UsageType: "USE1-EBS:VolumeUsage.gp3",
			ResourceID: id, RegionCode: curfixture.Region, Start: day, End: day.Add(time.Hour), Unblended: curfixture.F(0.01)}
		if n := rng.IntN(5); n > 0 {
			r.Tags = map[string]string{}
			for range n - 1 {
				r.Tags[keys[rng.IntN(len(keys))]] = "owned"
			}
		}
		for k := range r.Tags {
			if name := string(bill.ClusterTagName([]byte(k))); name != "" && (want[id] == "" || name < want[id]) {
				want[id] = name
			}
		}
		rows[i] = r
	}
	path := filepath.Join(t.TempDir(), "tags.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := curfixture.WriteParquet(f, rows, curfixture.Options{RowGroupRows: 9000}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := readFile(t, path, time.Time{}, time.Time{})
	if len(s.Resources) != len(rows) {
		t.Fatalf("%d resource-days, want %d", len(s.Resources), len(rows))
	}
	named := 0
	for k, c := range s.Resources {
		if c.Cluster != want[k.ResourceID] {
			t.Errorf("%s: cluster %q, want %q", k.ResourceID, c.Cluster, want[k.ResourceID])
		}
		if c.Cluster != "" {
			named++
		}
	}
	if named < 1000 || named > len(rows)-1000 {
		t.Errorf("%d of %d volumes name a cluster: the case is not mixed", named, len(rows))
	}
}
