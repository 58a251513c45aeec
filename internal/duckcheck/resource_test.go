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

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// resourceLineOf is the resource rules' projection of a fixture row, as
// the reader decodes it (a null string reads as "").
func resourceLineOf(r curfixture.Row) bill.ResourceLine {
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
	l := bill.ResourceLine{Line: curLineOf(r), Account: s(bill.ColUsageAccountID, r.AccountID), ProductCode: s(bill.ColProductCode, r.ProductCode),
		RegionCode: s(bill.ColRegionCode, r.RegionCode), Description: s(bill.ColDescription, r.Description),
		ReservationARN: s(bill.ColReservationARN, r.ReservationARN),
		RIEffective:    f(r.RIEffective), RINetEffective: f(r.RINetEffective), RIUnusedUpfront: f(r.RIUnusedUpfront),
		RIUnusedRecurring: f(r.RIUnusedRecurring), RINetUnusedUpfront: f(r.RINetUnusedUpfront), RINetUnusedRecurring: f(r.RINetUnusedRecurring),
		SPTotalCommitment: f(r.SPTotalCommitment), SPUsedCommitment: f(r.SPUsedCommitment)}
	for k := range r.Tags {
		if name := string(bill.ClusterTagName([]byte(k))); name != "" && (l.ClusterTag == "" || name < l.ClusterTag) {
			l.ClusterTag = name
		}
	}
	return l
}

// resourceEdgeRows are random lines mixing every value the resource rules
// branch on: line item types of the amortized CASE, resource ids of every
// kind and none, usage types, product codes, null, 0, negative and
// positive costs, null strings.
func resourceEdgeRows(n int) []curfixture.Row {
	rng := rand.New(rand.NewPCG(46, 2))
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
			AccountID:      pick(curfixture.AccountA, curfixture.AccountB),
			LineItemType:   pick("Usage", "DiscountedUsage", "SavingsPlanCoveredUsage", "SavingsPlanNegation", "SavingsPlanUpfrontFee", "SavingsPlanRecurringFee", "RIFee", "Fee", "Refund", "Tax", "Credit", ""),
			ProductCode:    pick("AmazonEC2", "AWSDataTransfer", "AWSELB", "ComputeSavingsPlans", ""),
			UsageType:      pick("USE1-BoxUsage:m5.xlarge", "USE1-SpotUsage:m5.large", "USE1-DedicatedUsage:c5.large", "USE1-DataTransfer-Out-Bytes", "USE1-EBS:VolumeUsage.gp3", "USE1-EBS:VolumeP-IOPS.io2", "USE1-LoadBalancerUsage", "USE1-EKS-EC2-vCPU-Hours", ""),
			ResourceID:     pick("i-0123", "vol-0abc", "snap-0abc", "arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/app/x/1", "arn:aws:ec2:us-east-1:1:reserved-instances/x", "i-", "", curfixture.PodID(curfixture.AccountA, "prod", "payments", "api")),
			ReservationARN: pick("", "arn:r"), Description: pick("", "Refund for one-time fee for Savings Plan ID 1", "Refund for something else"),
			RegionCode: pick("us-east-1", "eu-west-1", ""), Start: day.Add(time.Duration(rng.IntN(48)) * time.Hour),
			Unblended: num(), NetUnblended: num(), PublicOnDemand: num(), SPEffective: num(), SPNetEffective: num(), RIEffective: num(),
			RINetEffective: num(), RIUnusedUpfront: num(), RIUnusedRecurring: num(), RINetUnusedUpfront: num(), RINetUnusedRecurring: num(),
			SPTotalCommitment: num(), SPUsedCommitment: num(),
		}
		// Tags: none (a null map), an empty map, cluster keys (one, two,
		// the prefix alone), keys LIKE's '_' would match but starts_with
		// does not, and other user tags.
		switch rng.IntN(5) {
		case 1:
			r.Tags = map[string]string{}
		case 2, 3, 4:
			r.Tags = map[string]string{}
			for range rng.IntN(4) {
				r.Tags[pick(bill.ClusterTagPrefix+"prod", bill.ClusterTagPrefix+"dev", bill.ClusterTagPrefix, "userXkubernetesXioXclusterXprod",
					"user_kubernetes_io_cluster", "user_eks_cluster_name", "aws_eks_namespace")] = pick("owned", "shared", "")
			}
		}
		if rng.IntN(6) == 0 {
			r.NullStrings = []string{pick(bill.ColLineItemType, bill.ColResourceID, bill.ColUsageType, bill.ColProductCode, bill.ColReservationARN, bill.ColDescription)}
		}
		if rng.IntN(30) == 0 {
			r.Start = time.Time{}
		}
		rows[i] = r
	}
	return rows
}

// TestResourceRulesGoEqualsSQL evaluates every resource rule in Go and
// its SQL in DuckDB on every line of the canonical fixture and of random
// edge lines.
func TestResourceRulesGoEqualsSQL(t *testing.T) {
	rows := append(curfixture.Canonical(), resourceEdgeRows(12000)...)
	path := filepath.Join(t.TempDir(), "lines.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := curfixture.WriteParquet(f, rows, curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rules := bill.ResourceRules()
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
	n, kinds, mismatches := 0, map[string]int{}, 0
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
		l := resourceLineOf(rows[i])
		kinds[bill.ResourceKindOf(&l)]++
		for j, r := range rules {
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
	t.Logf("kinds: %v", kinds)
	for _, k := range []string{bill.KindInstance, bill.KindVolume, bill.KindDataTransfer, bill.KindLoadBalancer, ""} {
		if kinds[k] < 50 {
			t.Errorf("only %d lines of kind %q compared", kinds[k], k)
		}
	}
	if n != len(rows) {
		t.Fatalf("%d lines compared, want %d", n, len(rows))
	}
}

// TestResourceDaySQLEqualsReaderAndHand runs ResourceDaySQL and
// ParentsSQL on DuckDB over the canonical export: equal to the reader's
// Resources and Parents, and to sums worked out by hand from the
// fixture's lines for the cases it was built for.
func TestResourceDaySQLEqualsReaderAndHand(t *testing.T) {
	dir, _ := curcheck.WriteCanonical(t, 5)
	table := fmt.Sprintf("read_parquet('%s', hive_partitioning = false)", filepath.Join(dir, curfixture.Export, "data", "*", "*.parquet"))
	db := curOpenDuck(t)
	res, err := db.Query(bill.ResourceDaySQL(table))
	if err != nil {
		t.Fatalf("%v\n%s", err, bill.ResourceDaySQL(table))
	}
	sqlRes := map[bill.ResourceKey]bill.ResourceCost{}
	for res.Next() {
		var k bill.ResourceKey
		var c bill.ResourceCost
		var cluster sql.NullString
		if err := res.Scan(&k.Account, &k.Region, &k.ResourceID, &k.Kind, &k.Day, &c.Amortized, &c.Net, &c.PublicOnDemand, &c.Lines, &cluster); err != nil {
			t.Fatal(err)
		}
		c.Cluster = cluster.String
		sqlRes[k] = c
	}
	res.Close()
	got := curcheck.ReadDir(t, dir, time.Time{}, time.Time{})
	if len(got.Resources) != len(sqlRes) {
		t.Errorf("reader %d resource-days, SQL %d", len(got.Resources), len(sqlRes))
	}
	for k, c := range sqlRes {
		g := got.Resources[k]
		if g == nil || g.Lines != c.Lines || g.Cluster != c.Cluster || !curcheck.Near(g.Amortized, c.Amortized) || !curcheck.Near(g.Net, c.Net) || !curcheck.Near(g.PublicOnDemand, c.PublicOnDemand) {
			t.Errorf("%+v: reader %+v, SQL %+v", k, g, c)
		}
	}
	a, d1, d2 := curfixture.AccountA, curfixture.Day1, curfixture.Day2
	key := func(id, kind string, day time.Time) bill.ResourceKey {
		return bill.ResourceKey{Account: a, Region: curfixture.Region, ResourceID: id, Kind: kind, Day: day}
	}
	for k, w := range map[bill.ResourceKey]bill.ResourceCost{
		// Two Savings Plan hours at 0.98 effective (0.686 net), their
		// negations 0; public on demand 1.006 an hour, not the negation's.
		key(curfixture.InstGPU, bill.KindInstance, d1): {Amortized: 1.96, Net: 1.372, PublicOnDemand: 2.012, Lines: 4},
		// Two RI hours at 0.12 effective; the net unblended cost is 0, so
		// the net is the gross (as the rule has it).
		key(curfixture.InstRI, bill.KindInstance, d1):   {Amortized: 0.24, Net: 0.24, PublicOnDemand: 0.384, Lines: 2},
		key(curfixture.InstSpot, bill.KindInstance, d1): {Amortized: 0.14, Net: 0.126, PublicOnDemand: 0.384, Lines: 2},
		key(curfixture.InstLost, bill.KindInstance, d2): {Amortized: 0.0185, Net: 0.0147, PublicOnDemand: 0.025, Lines: 1},
		key(curfixture.Volume, bill.KindVolume, d1):     {Amortized: 0.022, Net: 0.011 + 0.0099, PublicOnDemand: 0.022, Lines: 2},
		// Tagged with the cluster (and with the tag prefix alone, no name).
		key(curfixture.VolumeLost, bill.KindVolume, d1):    {Amortized: 0.022, Net: 0.0198, PublicOnDemand: 0.022, Lines: 1, Cluster: curfixture.ClusterName},
		key(curfixture.InstRI, bill.KindDataTransfer, d1):  {Amortized: 0.18, Net: 0.18, PublicOnDemand: 0.18, Lines: 1},
		key(curfixture.LoadBal, bill.KindLoadBalancer, d1): {Amortized: 0.0225, Net: 0.0225, PublicOnDemand: 0.0225, Lines: 1},
	} {
		c, ok := sqlRes[k]
		if !ok || c.Lines != w.Lines || c.Cluster != w.Cluster || !curcheck.Near(c.Amortized, w.Amortized) || !curcheck.Near(c.Net, w.Net) || !curcheck.Near(c.PublicOnDemand, w.PublicOnDemand) {
			t.Errorf("%+v: SQL %+v (found %v), by hand %+v", k, c, ok, w)
		}
	}
	for k := range sqlRes {
		if strings.Contains(k.ResourceID, "reserved-instances") || strings.Contains(k.ResourceID, "savingsplan") {
			t.Errorf("a fee line became a resource-day: %+v", k)
		}
	}

	res, err = db.Query(bill.ParentsSQL(table))
	if err != nil {
		t.Fatalf("%v\n%s", err, bill.ParentsSQL(table))
	}
	defer res.Close()
	n := 0
	for res.Next() {
		var k bill.ParentKey
		var c bill.ParentCost
		if err := res.Scan(&k.Account, &k.Region, &k.InstanceID, &k.Day, &c.ClusterARN, &c.Cluster, &c.Split, &c.Unused, &c.NetSplit, &c.NetUnused, &c.Lines); err != nil {
			t.Fatal(err)
		}
		g := got.Parents[k]
		if g == nil || *g != c && !(g.ClusterARN == c.ClusterARN && g.Cluster == c.Cluster && g.Lines == c.Lines &&
			curcheck.Near(g.Split, c.Split) && curcheck.Near(g.Unused, c.Unused) && curcheck.Near(g.NetSplit, c.NetSplit) && curcheck.Near(g.NetUnused, c.NetUnused)) {
			t.Errorf("parent %+v: reader %+v, SQL %+v", k, g, c)
		}
		n++
	}
	if n != len(got.Parents) || n == 0 {
		t.Errorf("SQL %d parent instance-days, reader %d", n, len(got.Parents))
	}
	lost := got.Parents[bill.ParentKey{Account: a, Region: curfixture.Region, InstanceID: curfixture.InstLost, Day: d2}]
	if lost == nil || lost.ClusterARN != curfixture.ClusterA || !curcheck.Near(lost.Split+lost.Unused, 0.0185) {
		t.Errorf("InstLost: %+v, want cluster A and 0.0185 split + unused", lost)
	}
}
