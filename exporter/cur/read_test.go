package cur_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cur"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// writeCanonical writes the canonical export into a temp dir with small
// row groups, so that skipping has something to skip.
func writeCanonical(t testing.TB, rowGroupRows int64) (dir string, keys []string) {
	t.Helper()
	dir = t.TempDir()
	keys, err := curfixture.WriteExport(dir, curfixture.Export, curfixture.Canonical(), curfixture.Options{RowGroupRows: rowGroupRows})
	if err != nil {
		t.Fatal(err)
	}
	return dir, keys
}

func readDir(t testing.TB, dir string, from, to time.Time) *cur.Summary {
	t.Helper()
	store, err := dirstore.New(dir, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cur.Read(context.Background(), cur.Options{Store: store, Prefix: curfixture.Export + "/", From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) <= eps*math.Max(1, math.Abs(a)+math.Abs(b)) }

// compareExpected checks a summary against the naive computation,
// key by key and both ways.
func compareExpected(t *testing.T, got *cur.Summary, want map[curfixture.ExpectKey]*curfixture.Expect) {
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
		wm := [cur.NumMeasures]*[3]float64{&w.Split, &w.Unused, &w.NetSplit, &w.NetUnused, &w.PublicOnDemandSplit, &w.PublicOnDemandUnused}
		for m := range cur.NumMeasures {
			for kind := range cur.Kind(cur.NumKinds) {
				if g, e := c.ByKind[kind][m], wm[m][kind]; !near(g, e) {
					t.Errorf("%s/%s %s %s: %v, want %v", k.ClusterARN, k.Namespace, k.Day.Format(time.DateOnly), m.String()+"_"+kind.String(), g, e)
				}
			}
		}
	}
}

func TestReadEqualsNaive(t *testing.T) {
	dir, keys := writeCanonical(t, 5)
	if len(keys) != 2 {
		t.Fatalf("keys %v: want two billing periods", keys)
	}
	got := readDir(t, dir, time.Time{}, time.Time{})
	compareExpected(t, got, curfixture.Expected(curfixture.Canonical()))
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
