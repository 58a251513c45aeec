package bill

import (
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// AWS's FOCUS 1.2 export as the bill (issue 47): many organisations have the Data Export
// FOCUS_1_2_AWS, not CUR 2.0, and its usage lines give the same resource-day costs as CUR's
// resource lines. Columns by AWS's table dictionary (DocFocus12) and FOCUS's definitions.
//
// Per line it has BilledCost (invoiced), EffectiveCost (amortized, after every discount) and
// ListCost (public prices). Against CUR 2.0 it lacks:
//   - an amortized cost before negotiated discounts (CUR's savings_plan_savings_plan_effective_cost
//     and reservation_effective_cost beside their net_ variants): amortized and net are both
//     EffectiveCost, so the waterfall's discounts and negotiated steps cannot be told apart;
//   - the usage type (x_UsageType is FOCUS 1.0's, not 1.2's): an instance's hours and its data
//     transfer share its ResourceId, so PricingUnit tells them apart;
//   - split cost allocation data: no pod lines, so the SCAD steps need CUR 2.0.

// DocFocus12 is AWS's table dictionary of the FOCUS 1.2 export.
const DocFocus12 = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-focus-1-2-aws-columns.html"

// FocusLine is the projection of one FOCUS 1.2 line the rules read; a null
// string reads as "".
type FocusLine struct {
	SubAccountID, RegionID, ResourceID  string
	ChargeCategory, PricingUnit         string
	ServiceCode                         string // x_ServiceCode
	ChargePeriodStart                   time.Time
	BilledCost, EffectiveCost, ListCost NullFloat
}

// Pricing units; resource ids are matched by resource.go's patterns.
const (
	focusHours = "Hours" // FOCUS's unit; CUR says Hrs
	focusHrs   = "Hrs"
	focusGB    = "GB"
)

// FocusKindOf is the resource kind of a FOCUS usage line (ChargeCategory Usage): an EC2
// instance by the hour (instance) or by the GB (data_transfer), an EBS volume, or a load
// balancer's ARN; "" otherwise. The split's rows name the same kinds.
func FocusKindOf(l *FocusLine) string {
	if l.ChargeCategory != "Usage" || l.ChargePeriodStart.IsZero() {
		return ""
	}
	switch id := l.ResourceID; {
	case Like(id, instancePattern) && (l.PricingUnit == focusHours || l.PricingUnit == focusHrs):
		return KindInstance
	case Like(id, instancePattern) && l.PricingUnit == focusGB:
		return KindDataTransfer
	case Like(id, volumePattern):
		return KindVolume
	case Like(id, lbPattern):
		return KindLoadBalancer
	}
	return ""
}

// FocusKindSQL is FocusKindOf over a FOCUS table's columns, qualified by
// alias ("o." reads o.ResourceId; "" the bare names).
func FocusKindSQL(alias string) string {
	c := func(name string) string { return alias + name }
	return `(CASE WHEN COALESCE(` + c("ChargeCategory") + `, '') <> 'Usage' OR ` + c("ChargePeriodStart") + ` IS NULL THEN NULL` +
		` WHEN ` + c("ResourceId") + ` LIKE '` + instancePattern + `' AND ` + c("PricingUnit") + ` IN ('` + focusHours + `', '` + focusHrs + `') THEN '` + KindInstance + `'` +
		` WHEN ` + c("ResourceId") + ` LIKE '` + instancePattern + `' AND ` + c("PricingUnit") + ` = '` + focusGB + `' THEN '` + KindDataTransfer + `'` +
		` WHEN ` + c("ResourceId") + ` LIKE '` + volumePattern + `' THEN '` + KindVolume + `'` +
		` WHEN ` + c("ResourceId") + ` LIKE '` + lbPattern + `' THEN '` + KindLoadBalancer + `' END)`
}

// FocusResourceKey is a resource-day of the FOCUS bill.
type FocusResourceKey = ResourceKey

// FocusResourceCost sums a resource-day's FOCUS lines: EffectiveCost as both amortized and
// net amortized, ListCost as public on-demand, and BilledCost. A sum of nulls is 0.
type FocusResourceCost struct {
	Amortized, Net, PublicOnDemand, Billed float64
	Lines                                  int64
}

// FocusResourceDays sums lines per resource-day (the UTC day of
// ChargePeriodStart), as FocusResourceDaySQL does.
func FocusResourceDays(lines []FocusLine) map[FocusResourceKey]*FocusResourceCost {
	out := map[FocusResourceKey]*FocusResourceCost{}
	for i := range lines {
		l := &lines[i]
		kind := FocusKindOf(l)
		if kind == "" {
			continue
		}
		c := entry(&out, FocusResourceKey{l.SubAccountID, l.RegionID, l.ResourceID, kind, exporter.Midnight(l.ChargePeriodStart)})
		c.Amortized += l.EffectiveCost.or0()
		c.Net += l.EffectiveCost.or0()
		c.PublicOnDemand += l.ListCost.or0()
		c.Billed += l.BilledCost.or0()
		c.Lines++
	}
	return out
}

// FocusResourceDaySQL is FocusResourceDays over a FOCUS 1.2 table (Athena and DuckDB).
func FocusResourceDaySQL(table string) string {
	keys := "account_id, region, resource_id, resource_kind, usage_date"
	lines := "SELECT SubAccountId AS account_id, RegionId AS region, ResourceId AS resource_id,\n" +
		"    " + FocusKindSQL("") + " AS resource_kind,\n" +
		"    CAST(ChargePeriodStart AS DATE) AS usage_date, EffectiveCost, ListCost, BilledCost\n  FROM " + table
	return groupSQL([]string{keys, sumAs("EffectiveCost", "amortized_cost"), sumAs("EffectiveCost", "net_amortized_cost"),
		sumAs("ListCost", "public_on_demand_cost"), sumAs("BilledCost", "billed_cost"), "COUNT(*) AS line_count"},
		lines, "focus_lines", "resource_kind IS NOT NULL", keys)
}
