package report

import (
	"strings"
	"testing"
	"time"
)

// TestCompareSides: every row of either side is kept and marked, the
// clusters named alike in two accounts stay apart, and the totals and the
// difference (Kubecost less the bill) add up.
func TestCompareSides(t *testing.T) {
	d1, d2 := time.Date(2026, 1, 14, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	a := ClusterRef{"111122223333", "us-east-1", "prod"}
	b := ClusterRef{"444455556666", "us-east-1", "prod"}
	k := func(c ClusterRef, ns string, d time.Time) CompareKey { return CompareKey{c, ns, d} }
	kube := map[CompareKey]*KubecostCost{
		k(a, "payments", d1):   {CPU: 3, RAM: 1, PV: 0.5, rows: 2},
		k(a, "monitoring", d1): {CPU: 1, rows: 1},
		k(a, BillIdle, d1):     {CPU: 2, Idle: 2, rows: 1},
		k(b, "payments", d1):   {CPU: 5, rows: 1},
	}
	bill := map[CompareKey]*BillCost{
		k(a, "payments", d1):    {Split: 2, Unused: 0.5, NetSplit: 1.8, Lines: 4},
		k(a, "payments", d2):    {Split: 1, Lines: 2},
		k(a, "experiments", d2): {Split: 0.25, Lines: 1},
	}
	got := compareSides(kube, bill, nil)
	if len(got) != 2 || got[0].Cluster != a || got[1].Cluster != b {
		t.Fatalf("clusters %+v, want %v then %v", got, a, b)
	}
	present := map[string]Present{}
	for _, c := range got {
		for _, r := range c.Daily {
			present[c.Cluster.Account+"/"+r.Namespace+"/"+r.Day.Format(time.DateOnly)] = r.Present
		}
	}
	want := map[string]Present{
		"111122223333/payments/2026-01-14": Both, "111122223333/monitoring/2026-01-14": KubecostOnly,
		"111122223333/__idle__/2026-01-14": KubecostOnly, "111122223333/payments/2026-01-15": BillOnly,
		"111122223333/experiments/2026-01-15": BillOnly, "444455556666/payments/2026-01-14": KubecostOnly,
	}
	if len(present) != len(want) {
		t.Errorf("rows %v, want %v", present, want)
	}
	for key, p := range want {
		if present[key] != p {
			t.Errorf("%s: %q, want %q", key, present[key], p)
		}
	}
	ta := got[0].Total
	if ta.Kubecost.Compute() != 7 || ta.Bill.Cost() != 3.75 || ta.Difference() != 3.25 || ta.Kubecost.OnlyKubecost() != 0.5 ||
		ta.Kubecost.Idle != 2 || ta.Bill.Unused != 0.5 || ta.Present != Both {
		t.Errorf("cluster A's total %+v: compute %v, bill %v, difference %v", ta, ta.Kubecost.Compute(), ta.Bill.Cost(), ta.Difference())
	}
	var ns []string
	for _, r := range got[0].Namespaces {
		ns = append(ns, r.Namespace+":"+string(r.Present))
	}
	// Largest first (the larger of the two sides), then by name.
	if s := strings.Join(ns, " "); s != "payments:both __idle__:kubecost_only monitoring:kubecost_only experiments:bill_only" {
		t.Errorf("namespaces of A: %s", s)
	}
}

// TestBillNamespace: the comparison names rows without a namespace as the
// bill views do.
func TestBillNamespace(t *testing.T) {
	for in, want := range map[string]string{Idle: "__idle__", "__shared__": "__unallocated__", "__unmounted__": "__unallocated__",
		Unallocated: "__unallocated__", "payments": "payments"} {
		if got := billNamespace(in); got != want {
			t.Errorf("billNamespace(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBillSectionInert: namespaces and cluster names of the bill come from
// pod ARNs in the CUR, so from anyone who can name a namespace or a
// cluster; markup in them comes out as text.
func TestBillSectionInert(t *testing.T) {
	day := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	const script = `<script>alert(1)</script>`
	c := ClusterRef{"111122223333", "us-east-1", `prod"><img src=x onerror=alert(2)>`}
	d := &Data{From: day, To: day, Generated: day, Currency: "USD", Clusters: []ClusterRef{c},
		Bill: &Comparison{Source: `s3://b/"><script>x</script>`, Clusters: compareSides(
			map[CompareKey]*KubecostCost{{c, script, day}: {CPU: 1, rows: 1}},
			map[CompareKey]*BillCost{{c, script, day}: {Split: 0.72, Lines: 1}}, nil)}}
	var b strings.Builder
	if err := Render(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", "<img"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("page holds live markup %q: ...%s...", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 3 {
		t.Errorf("the namespace is shown %d times, want it in both tables and as an attribute", n)
	}
	if !strings.Contains(page, `data-kubecost="1"`) || !strings.Contains(page, `data-bill="0.72"`) {
		t.Error("the row's amounts are not in its attributes")
	}
}
