package focuscheck

import (
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

// Check is one requirement of FOCUS 1.3 as a DuckDB query that counts the
// rows (or groups) breaking it. In SQL, $F is the dataset checked (the
// focus or focus_replaced view, or a copy) and $E the AWS FOCUS export
// it was made from.
type Check struct {
	ID     string // the requirements model's rule id
	Says   string // the rule, in this project's words
	Source string // where the rule is: model file (or column page) and commit
	SQL    string
	// Replaced marks checks of the replaced view only (its totals).
	Replaced bool
}

// Where the rules were read: FinOps-Open-Cost-and-Usage-Spec/FOCUS_Spec,
// the 1.3 model files at these commits.
const (
	srcModel  = "specification/requirements_model/model_rules/"
	srcSplit  = srcModel + "attributes/datageneratorcalculatedsplitcostallocationhandling.json@869db24ea77341fa6edac14e45f56228a5e0792e"
	srcResID  = srcModel + "columns/allocatedresourceid.json@f60411a47ca674c5f069c94838785b9efa1e5856"
	srcDetail = srcModel + "columns/allocatedmethoddetails.json@1b509dc5b31832c4f3b2175d5f8988b6aafd2fb5"
	srcBilled = srcModel + "columns/billedcost.json@0d80cb90ce161c547899280d0b697eab29fb04af"
	srcEff    = srcModel + "columns/effectivecost.json@1b509dc5b31832c4f3b2175d5f8988b6aafd2fb5"
	srcList   = srcModel + "columns/listcost.json@1b509dc5b31832c4f3b2175d5f8988b6aafd2fb5"
	srcContr  = srcModel + "columns/contractedcost.json@1b509dc5b31832c4f3b2175d5f8988b6aafd2fb5"
	srcCat    = srcModel + "columns/chargecategory.json@82ea71b4508e1b0f9be8ee2daac3295080273f6c"
	srcCPS    = srcModel + "columns/chargeperiodstart.json@82ea71b4508e1b0f9be8ee2daac3295080273f6c"
	srcBA     = srcModel + "columns/billingaccountid.json@0d80cb90ce161c547899280d0b697eab29fb04af"
	srcRes    = srcModel + "columns/resourceid.json@82ea71b4508e1b0f9be8ee2daac3295080273f6c"
	srcSPN    = srcModel + "columns/serviceprovidername.json@4b023c83fff51cd149f1d60c62378d8409db15b2"
	srcPN     = srcModel + "columns/providername.json@30bf618c90432d04eca1e4260bd31a483097764e"
	srcII     = srcModel + "columns/invoiceissuer.json@2e2fc28d1152facb21fde405ba0e74c40c88b375"
	// Columns with no model file in 1.3's snapshot: their column pages.
	srcPages  = "specification/datasets/cost_and_usage/columns/"
	srcMethod = srcPages + "allocatedmethodid.md@0a167c5bb7f5438df595317c569d2ceac1085575"
	srcName   = srcPages + "allocatedresourcename.md@0da1788ec647b3e261111c887973eafb744ff372"
	srcTags   = srcPages + "allocatedtags.md@005e8b61f548e30fc0ff74c45be6a44243a13c4c"
	srcObject = srcPages + "allocatedmethoddetails.md@0b91cb13c227dc7a12901789706902100bad187b"
)

// Row predicates. A charge is related to the split when it carries the
// split's Kubernetes context (x_ClusterArn), which the views set exactly
// on allocated charges: the checks of the allocation columns must not
// lean on those columns themselves. The unallocated portion is the
// node's idle (and a bill-only instance), workload kind __idle__.
const (
	related     = "x_ClusterArn IS NOT NULL"
	unallocated = "x_ClusterArn IS NOT NULL AND x_ControllerKind = '__idle__'"
	allocated   = "x_ClusterArn IS NOT NULL AND coalesce(x_ControllerKind, '') <> '__idle__'"
	// originKey identifies an origin charge in AWS's export: the resource,
	// its charge period, category, price, operation and commitment.
	originKey = "ResourceId, ChargePeriodStart, ChargePeriodEnd, ChargeCategory, SkuPriceId, x_Operation, CommitmentDiscountId"
	tolerance = "1e-9"
)

func typeCheck(id, col, want, src string) Check {
	cond := map[string]string{
		"String":   "typeof(%s) <> 'VARCHAR'",
		"Decimal":  "typeof(%s) NOT IN ('DOUBLE', 'FLOAT') AND typeof(%s) NOT LIKE 'DECIMAL%%'",
		"DateTime": "typeof(%s) NOT LIKE 'TIMESTAMP%%'",
	}[want]
	return Check{id, col + " is of type " + want + ".", src,
		"SELECT count(*) FROM $F WHERE " + strings.ReplaceAll(cond, "%s", col), false}
}

func notNull(id, col, src string) Check {
	return Check{id, col + " is never null.", src, "SELECT count(*) FROM $F WHERE " + col + " IS NULL", false}
}

func where(id, says, src, cond string) Check {
	return Check{id, says, src, "SELECT count(*) FROM $F WHERE " + cond, false}
}

// eq is a relative equality of two doubles, as the sums are checked.
func differs(a, b string) string {
	return fmt.Sprintf("abs(%s - %s) > %s * greatest(1, abs(%s))", a, b, tolerance, b)
}

// columnChecks are the MUSTs and MUST NOTs of the columns the views emit
// that a query can decide.
func columnChecks() []Check {
	cs := []Check{
		typeCheck("CAU-BilledCost-C-001-M", "BilledCost", "Decimal", srcBilled),
		notNull("CAU-BilledCost-C-003-M", "BilledCost", srcBilled),
		where("CAU-BilledCost-C-004-M", "BilledCost is a valid decimal (no NaN or infinity).", srcBilled, "isnan(BilledCost) OR isinf(BilledCost)"),
		typeCheck("CAU-EffectiveCost-C-001-M", "EffectiveCost", "Decimal", srcEff),
		notNull("CAU-EffectiveCost-C-003-M", "EffectiveCost", srcEff),
		typeCheck("CAU-ListCost-C-001-M", "ListCost", "Decimal", srcList),
		notNull("CAU-ListCost-C-003-M", "ListCost", srcList),
		where("CAU-ListCost-C-011-C", "ListCost is ListUnitPrice times PricingQuantity when both are set.", srcList,
			"ListUnitPrice IS NOT NULL AND PricingQuantity IS NOT NULL AND "+differs("ListCost", "ListUnitPrice * PricingQuantity")),
		typeCheck("CAU-ContractedCost-C-001-M", "ContractedCost", "Decimal", srcContr),
		notNull("CAU-ContractedCost-C-003-M", "ContractedCost", srcContr),
		where("CAU-ContractedCost-C-011-C", "ContractedCost is ContractedUnitPrice times PricingQuantity when both are set.", srcContr,
			"ContractedUnitPrice IS NOT NULL AND PricingQuantity IS NOT NULL AND "+differs("ContractedCost", "ContractedUnitPrice * PricingQuantity")),
		typeCheck("CAU-ChargeCategory-C-001-M", "ChargeCategory", "String", srcCat),
		notNull("CAU-ChargeCategory-C-002-M", "ChargeCategory", srcCat),
		where("CAU-ChargeCategory-C-003-M", "ChargeCategory is Usage, Purchase, Tax, Credit or Adjustment.", srcCat,
			"ChargeCategory NOT IN ('Usage', 'Purchase', 'Tax', 'Credit', 'Adjustment')"),
		typeCheck("CAU-ChargePeriodStart-C-001-M", "ChargePeriodStart", "DateTime", srcCPS),
		notNull("CAU-ChargePeriodStart-C-003-M", "ChargePeriodStart", srcCPS),
		notNull("CAU-BillingAccountId-C-001-M", "BillingAccountId", srcBA),
		typeCheck("CAU-BillingAccountId-C-002-M", "BillingAccountId", "String", srcBA),
		typeCheck("CAU-ResourceId-C-001-M", "ResourceId", "String", srcRes),
		where("CAU-ResourceId-C-005-C", "An allocated charge is a resource's charge: its ResourceId is set.", srcRes, related+" AND ResourceId IS NULL"),
		typeCheck("CAU-ServiceProviderName-C-001-M", "ServiceProviderName", "String", srcSPN),
		notNull("CAU-ServiceProviderName-C-003-M", "ServiceProviderName", srcSPN),
		typeCheck("CAU-ProviderName-C-001-M", "ProviderName", "String", srcPN),
		notNull("CAU-ProviderName-C-003-M", "ProviderName", srcPN),
		typeCheck("InvoiceIssuerName-C-001-M", "InvoiceIssuerName", "String", srcII),
		notNull("InvoiceIssuerName-C-003-M", "InvoiceIssuerName", srcII),
	}
	return append(cs, allocationChecks()...)
}

// allocationChecks are FOCUS 1.3's split cost allocation columns.
func allocationChecks() []Check {
	tagsObject := "AllocatedTags IS NOT NULL AND (NOT json_valid(AllocatedTags) OR json_type(AllocatedTags) <> 'OBJECT')"
	foreignKey := fmt.Sprintf("len(list_filter(json_keys(AllocatedTags), k -> NOT starts_with(k, '%s'))) > 0", gen.FocusTagPrefix)
	return []Check{
		typeCheck("CAU-AllocatedResourceId-C-001-M", "AllocatedResourceId", "String", srcResID),
		{"CAU-AllocatedResourceId-C-002-M", "AllocatedResourceId keeps the split's names as they are (StringHandling: original casing and spacing).", srcResID + " and " + srcModel + "attributes/stringhandling.json@1b509dc5b31832c4f3b2175d5f8988b6aafd2fb5 (A-003-M)",
			"SELECT count(*) FROM $F a WHERE a.AllocatedResourceId IS NOT NULL AND NOT EXISTS (SELECT 1 FROM $S s WHERE " +
				"a.AllocatedResourceId = s.cluster_arn || '/' || s.namespace || '/' || a.x_ControllerKind || '/' || " +
				"CASE WHEN coalesce(s.controller, '') <> '' THEN s.controller ELSE s.pod END)", false},
		where("CAU-AllocatedResourceId-C-004-C", "AllocatedResourceId is null on charges the split did not make.", srcResID,
			"NOT ("+related+") AND AllocatedResourceId IS NOT NULL"),
		where("CAU-AllocatedResourceId-C-005-C", "AllocatedResourceId is null on the unallocated portion (the node's idle).", srcResID,
			unallocated+" AND AllocatedResourceId IS NOT NULL"),
		where("CAU-AllocatedResourceId-C-006-C", "AllocatedResourceId is set on the allocated portion.", srcResID,
			allocated+" AND AllocatedResourceId IS NULL"),
		typeCheck("CAU-AllocatedMethodDetails-C-001-M", "AllocatedMethodDetails", "String", srcDetail),
		where("CAU-AllocatedMethodDetails-C-003-M", "AllocatedMethodDetails is a JSON object.", srcDetail,
			"AllocatedMethodDetails IS NOT NULL AND (NOT json_valid(AllocatedMethodDetails) OR json_type(AllocatedMethodDetails) <> 'OBJECT')"),
		where("CAU-AllocatedMethodDetails-C-005-C", "AllocatedMethodDetails is null on charges the split did not make.", srcDetail,
			"NOT ("+related+") AND AllocatedMethodDetails IS NOT NULL"),
		{"CAU-AllocatedMethodDetails-C-007-C", "AllocatedMethodDetails follows the object schema: a non-empty Elements array whose entries carry a numeric AllocatedRatio.", srcDetail + " and " + srcObject,
			"SELECT (SELECT count(*) FROM $F WHERE AllocatedMethodDetails IS NOT NULL AND json_valid(AllocatedMethodDetails) AND " +
				"(coalesce(json_type(AllocatedMethodDetails, '$.Elements'), '') <> 'ARRAY' OR json_array_length(AllocatedMethodDetails, '$.Elements') = 0)) + " +
				"(SELECT count(*) FROM (SELECT unnest(json_extract(AllocatedMethodDetails, '$.Elements[*]')) AS e FROM $F " +
				"WHERE AllocatedMethodDetails IS NOT NULL AND json_valid(AllocatedMethodDetails) AND json_type(AllocatedMethodDetails, '$.Elements') = 'ARRAY') " +
				"WHERE coalesce(json_type(e, '$.AllocatedRatio'), '') NOT IN ('DOUBLE', 'UBIGINT', 'BIGINT'))", false},
		{"CAU-AllocatedMethodDetailsObject-O-000-C", "The AllocatedRatio of the allocated charges of one origin charge sum to 1.", srcObject,
			"SELECT count(*) FROM (SELECT " + originKey + ", SUM(CAST(json_extract(AllocatedMethodDetails, '$.Elements[0].AllocatedRatio') AS DOUBLE)) AS r " +
				"FROM $F WHERE " + related + " GROUP BY " + originKey + ") WHERE " + differs("r", "1"), false},
		where("AllocatedMethodId (column page)", "AllocatedMethodId is set, to the documented "+gen.FocusMethodID+", exactly on the split's charges.", srcMethod,
			"("+related+") <> (AllocatedMethodId IS NOT NULL) OR ("+related+" AND AllocatedMethodId <> '"+gen.FocusMethodID+"')"),
		where("AllocatedResourceName (column page)", "AllocatedResourceName is null exactly when AllocatedResourceId is.", srcName,
			"(AllocatedResourceName IS NULL) <> (AllocatedResourceId IS NULL)"),
		where("AllocatedTags (column page): JSON object", "AllocatedTags is a JSON object of key-value pairs.", srcTags, tagsObject),
		where("AllocatedTags (column page): null when not split", "AllocatedTags is null on charges the split did not make.", srcTags,
			"NOT ("+related+") AND AllocatedTags IS NOT NULL"),
		where("AllocatedTags (column page): not in Tags", "AllocatedTags holds no key the charge's Tags hold.", srcTags,
			"AllocatedTags IS NOT NULL AND json_valid(AllocatedTags) AND len(list_intersect(json_keys(AllocatedTags), map_keys(Tags))) > 0"),
		where("AllocatedTags (column page): prefixed keys", "Data generator-defined tag keys carry the generator's prefix "+gen.FocusTagPrefix+".", srcTags,
			"AllocatedTags IS NOT NULL AND json_valid(AllocatedTags) AND "+foreignKey),
	}
}
