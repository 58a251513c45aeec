package bill_test

import (
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

func TestReadEqualsNaive(t *testing.T) {
	dir, keys := curcheck.WriteCanonical(t, 5)
	if len(keys) != 2 {
		t.Fatalf("keys %v: want two billing periods", keys)
	}
	got := curcheck.ReadDir(t, dir, time.Time{}, time.Time{})
	curcheck.Equal(t, got, curfixture.Expected(curfixture.Canonical()))
	if got.Stats.Files != 2 || got.Stats.RowGroupsSkipped != 0 || got.Stats.Lines != int64(len(curfixture.Canonical())) {
		t.Errorf("stats %+v", got.Stats)
	}
}

// The fixture covers what it claims: the keys of both clusters, the
// namespaces of both sides, both days of the midnight pod, a GPU cost,
// net costs below gross ones, and dropped lines.
func TestCanonicalCoverage(t *testing.T) {
	want := curfixture.Expected(curfixture.Canonical())
	has := func(cluster, ns string, day time.Time) *curfixture.Expect {
		return want[curfixture.ExpectKey{ClusterARN: cluster, Namespace: ns, Day: day}]
	}
	for cluster, nss := range curfixture.KubecostAndBill {
		for _, ns := range nss {
			if has(cluster, ns, curfixture.Day1) == nil && has(cluster, ns, curfixture.Day2) == nil {
				t.Errorf("%s/%s has no bill lines", cluster, ns)
			}
		}
	}
	for cluster, nss := range curfixture.KubecostOnly {
		for _, ns := range nss {
			for k := range want {
				if k.ClusterARN == cluster && k.Namespace == ns {
					t.Errorf("Kubecost-only %s/%s has bill lines", cluster, ns)
				}
			}
		}
	}
	api1, api2 := has(curfixture.ClusterA, "payments", curfixture.Day1), has(curfixture.ClusterA, "payments", curfixture.Day2)
	if api1 == nil || api2 == nil {
		t.Fatal("payments/api does not cross midnight")
	}
	if ml := has(curfixture.ClusterA, "ml", curfixture.Day1); ml == nil || ml.Split[2] == 0 || ml.NetSplit[2] >= ml.Split[2] {
		t.Errorf("ml: no GPU cost with a Savings Plan net: %+v", ml)
	}
	if b := has(curfixture.ClusterB, "payments", curfixture.Day1); b == nil || b.Split[0] == api1.Split[0] {
		t.Errorf("cluster B's payments is not apart from A's: %+v %+v", b, api1)
	}
	if api1.NetSplit[0] >= api1.Split[0] {
		t.Errorf("payments: RI net split not below split")
	}
}
