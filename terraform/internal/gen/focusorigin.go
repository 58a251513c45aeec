package gen

import (
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

// FocusTableDictionary is where the CUR 2.0 column behind each FOCUS 1.2
// column is named: AWS's FOCUS 1.2 table dictionary.
const FocusTableDictionary = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-focus-1-2-aws.html"

// focusOriginCURColumns maps each column of FocusExportColumns, in order,
// to its value on a CUR 2.0 resource-level usage line (exporter/bill's
// resource_kind not null), after FocusTableDictionary: the account, period,
// resource, usage and commitment columns read their CUR 2.0 equivalents;
// the costs are exporter/bill's rules (EffectiveCost the amortized cost of
// cid-framework's summary_view, ListCost the public on-demand cost), and
// BilledCost the unblended cost, so that a Savings Plan's covered hour
// and its negation bill 0 together. ContractedCost is the list cost: a
// CUR 2.0 line has no negotiated rate column of the resource's own.
// Columns the CUR has no equivalent of are null. kind, amortized and
// public are the SQL of the line's kind and cost rules.
func focusOriginCURColumns(kind, amortized, public string) map[string]string {
	sp, ri := "line_item_line_item_type = 'SavingsPlanCoveredUsage'", "line_item_line_item_type = 'DiscountedUsage'"
	unit := "(CASE " + kind + " WHEN 'data_transfer' THEN 'GB' WHEN 'volume' THEN 'GB-Mo' ELSE 'Hours' END)"
	perUnit := func(cost string) string {
		return "(CASE WHEN line_item_usage_amount <> 0 THEN " + cost + " / line_item_usage_amount END)"
	}
	return map[string]string{
		"BilledCost": "line_item_unblended_cost", "BillingAccountId": "bill_payer_account_id",
		"BillingAccountType": "'Billing Account'", "BillingCurrency": "line_item_currency_code",
		"BillingPeriodEnd": "bill_billing_period_end_date", "BillingPeriodStart": "bill_billing_period_start_date",
		"ChargeCategory": "'Usage'", "ChargeDescription": "line_item_line_item_description", "ChargeFrequency": "'Usage-Based'",
		"ChargePeriodEnd": "line_item_usage_end_date", "ChargePeriodStart": "line_item_usage_start_date",
		"CommitmentDiscountCategory": "(CASE WHEN " + sp + " THEN 'Spend' WHEN " + ri + " THEN 'Usage' END)",
		"CommitmentDiscountId":       "(CASE WHEN " + sp + " THEN savings_plan_savings_plan_a_r_n WHEN " + ri + " THEN reservation_reservation_a_r_n END)",
		"CommitmentDiscountStatus":   "(CASE WHEN " + sp + " OR " + ri + " THEN 'Used' END)",
		"CommitmentDiscountType":     "(CASE WHEN " + sp + " THEN 'Savings Plan' WHEN " + ri + " THEN 'Reserved Instance' END)",
		"ConsumedQuantity":           "line_item_usage_amount", "ConsumedUnit": unit,
		"ContractedCost": public, "ContractedUnitPrice": perUnit(public), "EffectiveCost": amortized,
		"InvoiceIssuerName": "'Amazon Web Services, Inc.'", "ListCost": public, "ListUnitPrice": perUnit(public),
		"PricingCategory": "(CASE WHEN " + sp + " OR " + ri + " THEN 'Committed' WHEN line_item_usage_type LIKE '%SpotUsage%' THEN 'Dynamic' ELSE 'Standard' END)",
		"PricingCurrency": "line_item_currency_code", "PricingCurrencyContractedUnitPrice": perUnit(public),
		"PricingCurrencyEffectiveCost": amortized, "PricingCurrencyListUnitPrice": perUnit(public),
		"PricingQuantity": "line_item_usage_amount", "PricingUnit": unit, "ProviderName": "'AWS'", "PublisherName": "'AWS'",
		"RegionId": "product_region_code", "ResourceId": "line_item_resource_id",
		"ServiceCategory": "(CASE " + kind + " WHEN 'instance' THEN 'Compute' WHEN 'volume' THEN 'Storage' ELSE 'Networking' END)",
		"ServiceName":     "line_item_product_code", "SkuId": "line_item_usage_type",
		"SubAccountId": "line_item_usage_account_id", "SubAccountType": "'Linked Account'", "Tags": "resource_tags",
		"x_Operation": "line_item_operation", "x_ServiceCode": "line_item_product_code",
	}
}

// FocusOriginCURSQL selects the resource-level usage lines of the CUR 2.0
// table curTable as FOCUS 1.2 lines with FocusExportColumns' names and
// types: the origin charges of users who have a CUR 2.0 export and no
// FOCUS one, for the FOCUS views to read in the export's place.
func FocusOriginCURSQL(curTable string) string {
	rules := map[string]string{}
	for _, r := range bill.ResourceRules() {
		rules[r.Name] = r.SQL
	}
	m := focusOriginCURColumns(rules["resource_kind"], rules["amortized_cost"], rules["public_on_demand_cost"])
	var items []string
	for _, c := range FocusExportColumns() {
		e, ok := m[c.Name]
		if !ok {
			e = "NULL"
		}
		t := map[string]string{"double": "double", "timestamp": "timestamp", "map": "map(varchar, varchar)"}[c.Type]
		if t == "" {
			t = "varchar"
		}
		items = append(items, fmt.Sprintf("  CAST(%s AS %s) AS %s", e, t, c.Name))
	}
	return "SELECT\n" + strings.Join(items, ",\n") + "\nFROM " + curTable + "\nWHERE " + rules["resource_kind"] + " IS NOT NULL\n"
}
