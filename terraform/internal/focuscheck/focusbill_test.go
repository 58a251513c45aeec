package focuscheck

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

// focusLine is the reader's projection of a fixture row.
func focusLine(r curfixture.FocusRow) bill.FocusLine {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	f := func(p *float64) bill.NullFloat {
		if p == nil {
			return bill.NullFloat{}
		}
		return bill.Float(*p)
	}
	var start time.Time
	if r.ChargePeriodStart != nil {
		start = *r.ChargePeriodStart
	}
	return bill.FocusLine{SubAccountID: s(r.SubAccountId), RegionID: s(r.RegionId), ResourceID: s(r.ResourceId),
		ChargeCategory: s(r.ChargeCategory), PricingUnit: s(r.PricingUnit), ServiceCode: s(r.XServiceCode),
		ChargePeriodStart: start, BilledCost: f(r.BilledCost), EffectiveCost: f(r.EffectiveCost), ListCost: f(r.ListCost)}
}

// TestFocusExportAsBill reads the FOCUS export fixture as the bill's
// resource-days twice, with bill.FocusResourceDaySQL on DuckDB and with
// bill.FocusResourceDays in Go, and holds the two equal; the kinds are the
// split's, so the instance's hours and its data transfer stay apart.
func TestFocusExportAsBill(t *testing.T) {
	rows := CanonicalFocus()
	db, _ := open(t, CanonicalSplit(), rows)
	var lines []bill.FocusLine
	for _, r := range rows {
		lines = append(lines, focusLine(r))
	}
	want := bill.FocusResourceDays(lines)
	q, err := db.Query(bill.FocusResourceDaySQL(ExportTable))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	got := 0
	kinds := map[string]int{}
	for q.Next() {
		var k bill.FocusResourceKey
		var c bill.FocusResourceCost
		if err := q.Scan(&k.Account, &k.Region, &k.ResourceID, &k.Kind, &k.Day, &c.Amortized, &c.Net, &c.PublicOnDemand, &c.Billed, &c.Lines); err != nil {
			t.Fatal(err)
		}
		k.Day = k.Day.UTC()
		got++
		kinds[k.Kind]++
		w, ok := want[k]
		if !ok {
			t.Errorf("SQL has %+v, Go does not", k)
			continue
		}
		for _, p := range [][2]float64{{c.Amortized, w.Amortized}, {c.Net, w.Net}, {c.PublicOnDemand, w.PublicOnDemand}, {c.Billed, w.Billed}} {
			if math.Abs(p[0]-p[1]) > 1e-9*math.Max(1, math.Abs(p[1])) {
				t.Errorf("%+v: SQL %+v, Go %+v", k, c, *w)
			}
		}
		if c.Lines != w.Lines {
			t.Errorf("%+v: SQL %d lines, Go %d", k, c.Lines, w.Lines)
		}
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}
	// i-0aaa, i-0bbb, i-0ddd, i-0eee, i-0fff; i-0aaa's data transfer; the volume.
	if got != len(want) || kinds["instance"] != 5 || kinds["data_transfer"] != 1 || kinds["volume"] != 1 {
		t.Errorf("SQL %d resource-days %v, Go %d", got, kinds, len(want))
	}
	a := want[bill.FocusResourceKey{Account: account, Region: "eu-west-1", ResourceID: "i-0bbb", Kind: "instance", Day: Day}]
	if a == nil || math.Abs(a.Amortized-0.75) > 1e-12 || a.Billed != 0 || math.Abs(a.PublicOnDemand-3*0.384) > 1e-12 {
		t.Errorf("the Savings Plan instance-day: %+v", a)
	}
}

// TestFixtureHasTheViewsColumns holds the fixture's Parquet columns (AWS's
// dictionary, written in curfixture) against the columns the views read
// (written again in gen): a name one side spells differently fails here.
func TestFixtureHasTheViewsColumns(t *testing.T) {
	tags := map[string]bool{}
	typ := reflect.TypeOf(curfixture.FocusRow{})
	for i := 0; i < typ.NumField(); i++ {
		tags[strings.Split(typ.Field(i).Tag.Get("parquet"), ",")[0]] = true
	}
	for _, c := range gen.FocusExportColumns() {
		if !tags[c.Name] {
			t.Errorf("the FOCUS fixture has no column %s", c.Name)
		}
	}
	for _, c := range FocusMinimumColumns {
		found := false
		for tag := range tags {
			found = found || strings.ToLower(tag) == c
		}
		if !found {
			t.Errorf("the FOCUS fixture lacks the consolidation's minimum column %s", c)
		}
	}
}
