//go:build cgo

package billcheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// manyPVs is a pod with 20 PVs, the billed gp3 volume the last of its
// entries in the file: a reader of the first 16 entries (the view's old
// limit) misses the claim and gives the volume's cost to its other
// claims only.
func manyPVs() kcRow {
	r := kcRow{account: curfixture.AccountA, region: curfixture.Region, clusterID: curfixture.ClusterA,
		cluster: curfixture.ClusterName, day: curfixture.Day1, name: "prod/ip-spot/storage/db-0/c", namespace: "storage",
		node: "ip-spot", providerID: "aws:///us-east-1a/" + curfixture.InstSpot, pod: "db-0", controllerKind: "statefulset", controller: "db"}
	r.cpu = 0.01
	for i := range 19 {
		r.pvs = append(r.pvs, pvEntry{fmt.Sprintf("aws://us-east-1a/vol-0many%02d", i), 0.001 * float64(i+1), 0})
	}
	r.pvs = append(r.pvs, pvEntry{"aws://us-east-1a/" + curfixture.Volume, 0.03, 0})
	return r
}

// TestSplitManyPVs: every entry of a 20-PV allocation reaches the view,
// as exporter/split reads them; the billed volume's share of the pod is
// its PV cost over all its claims'; a view reading 16 entries differs.
func TestSplitManyPVs(t *testing.T) {
	kc, rows := append(archiveRows(), manyPVs()), curfixture.Canonical()
	want, _ := expectSplit(t, kc, rows)
	wantSplit := goSplit(want)
	for _, d := range diffSplit(querySplit(t, openViews(t, kc, rows)), wantSplit) {
		t.Error(d)
	}
	var claims, mine float64
	vols := 0
	for _, r := range want {
		if r.Kind != bill.KindVolume || r.Day != curfixture.Day1 {
			continue
		}
		if r.Pod == "db-0" {
			vols++
		}
		if r.ResourceID == curfixture.Volume {
			claims += r.KubecostCost
			if r.Pod == "db-0" {
				mine = r.Share
			}
		}
	}
	if vols != 20 {
		t.Errorf("db-0 has %d volume rows, want 20", vols)
	}
	if !near(mine, 0.03/claims) || mine == 0 {
		t.Errorf("db-0's share of %s = %v, want 0.03/%v", curfixture.Volume, mine, claims)
	}
	applied := false
	db := openViewsWith(t, kc, rows, func(kind, sql string) string {
		const old = "UNNEST(map_keys(kr.pvs))"
		if kind != "split_daily" || !strings.Contains(sql, old) {
			return sql
		}
		applied = true
		return strings.ReplaceAll(sql, old, "UNNEST(list_slice(map_keys(kr.pvs), 1, 16))")
	})
	if !applied {
		t.Fatal("the 16-entry mutation no longer applies")
	}
	if len(diffSplit(querySplit(t, db), wantSplit)) == 0 {
		t.Error("a view reading 16 pvs entries still equals exporter/split")
	}
}
