package bill

// Resource-level lines (issue 46): the bill's own lines of an EC2 instance, an EBS volume, an
// instance's data transfer and a load balancer (line_item_resource_id i-..., vol-..., the ARN).
// exporter/split gives their cost to Kubecost's pods by Kubecost's shares.

// CIDSummaryView is the source of the amortized and public cost rules (restated, not copied).
const CIDSummaryView = "aws-solutions-library-samples/cloud-intelligence-dashboards-framework@9cecc158b81504344cf96b38d5918b6953b2e97d:cid/builtin/core/data/queries/cid/summary_view.sql (summary_view amortized_cost, public_cost)"

// SCADNetAmortized is the net variant, which summary_view lacks: scad_cca_summary_view's lines
// not split ("met_amortized_cost", sic) take the net columns when
// line_item_net_unblended_cost is positive.
const SCADNetAmortized = SCADView + ", its branch of lines not split (net amortized cost)"

// Resource kinds, as the split's view names them (resource_kind).
const (
	KindInstance     = "instance"
	KindVolume       = "volume"
	KindDataTransfer = "data_transfer"
	KindLoadBalancer = "load_balancer"
)

// Line item types of the summary_view's amortized rule.
const (
	TypeSPNegation     = "SavingsPlanNegation"
	TypeSPUpfrontFee   = "SavingsPlanUpfrontFee"
	TypeSPRecurringFee = "SavingsPlanRecurringFee"
	TypeRIFee          = "RIFee"
	TypeFee            = "Fee"
	TypeRefund         = "Refund"
	productComputeSP   = "ComputeSavingsPlans"
	spRefundPrefix     = "Refund for one-time fee for Savings Plan ID"
	spRefundPattern    = spRefundPrefix + "%"
	productEC2         = "AmazonEC2"
	instancePattern    = "i-%"
	volumePattern      = "vol-%"
	lbPattern          = "arn:%:elasticloadbalancing:%"
	dataTransferPat    = "%DataTransfer%"
	boxUsagePattern    = "%BoxUsage%"
	spotUsagePattern   = "%SpotUsage%"
	dedicatedPattern   = "%DedicatedUsage%"
	ebsPattern         = "%EBS:%"
)

// ResourceLine is a Line with the columns the resource rules read too.
type ResourceLine struct {
	Line
	Account, ProductCode, RegionCode, Description string
	ReservationARN                                string
	RIEffective, RINetEffective                   NullFloat
	RIUnusedUpfront, RIUnusedRecurring            NullFloat
	RINetUnusedUpfront, RINetUnusedRecurring      NullFloat
	SPTotalCommitment, SPUsedCommitment           NullFloat
	// ClusterTag is the cluster a resource_tags key names (ClusterTagOf).
	ClusterTag string
}

// ClusterTagPrefix is the resource_tags key of the tag kubernetes.io/cluster/<name>: CUR 2.0
// writes an enabled user tag as "user_" and the key with other characters as "_"
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-resource-tags.html).
// The EBS CSI driver tags its volumes kubernetes.io/cluster/<name> = owned, as EKS tags the
// nodes (https://docs.aws.amazon.com/eks/latest/userguide/worker.html).
const ClusterTagPrefix = "user_kubernetes_io_cluster_"

// ClusterTagName is the cluster a resource_tags key names, nil for none.
func ClusterTagName(key []byte) []byte {
	if len(key) <= len(ClusterTagPrefix) || string(key[:len(ClusterTagPrefix)]) != ClusterTagPrefix {
		return nil
	}
	return key[len(ClusterTagPrefix):]
}

// clusterTagSQL is ClusterTagName of the least key naming a cluster. starts_with, not LIKE:
// '_' is LIKE's wildcard. The least key is [1] of the sorted keys with a NULL appended (Trino's
// [1] of an empty array is an error, DuckDB has no array_min); map_keys, filter, array_sort,
// || and [] are both Athena's (Trino's) and DuckDB's.
const clusterTagSQL = `substr((array_sort(filter(map_keys(resource_tags), k -> starts_with(k, '` + ClusterTagPrefix +
	`') AND length(k) > ` + clusterTagPrefixLen + `)) || ARRAY[CAST(NULL AS VARCHAR)])[1], ` + clusterTagPrefixLen + ` + 1)`

const clusterTagPrefixLen = "27" // len(ClusterTagPrefix), held by a test

// isResourceUsage: the line item types of a resource's usage: Usage (on demand or Spot),
// DiscountedUsage (RI), SavingsPlanCoveredUsage, and SavingsPlanNegation (0 under the amortized
// rule, else the covered hour counts twice). Fees, credits and discounts name no resource of
// the cluster; discounts reach the resource through its lines' net columns.
func isResourceUsage(t string) bool {
	return t == TypeUsage || t == TypeDiscountedUsage || t == TypeSPCoveredUsage || t == TypeSPNegation
}

const resourceUsageSQL = `line_item_line_item_type IN ('` + TypeUsage + `', '` + TypeDiscountedUsage + `', '` + TypeSPCoveredUsage + `', '` + TypeSPNegation + `')`

// ResourceKindOf says which resource a usage line (isResourceUsage) with a start date
// charges, "" for none:
//   - data_transfer: an instance's line of a DataTransfer usage type (USE1-DataTransfer-Out-Bytes,
//     ...), product AWSDataTransfer or AmazonEC2;
//   - instance: an AmazonEC2 instance line of usage type BoxUsage (on demand, RI or SP covered),
//     SpotUsage or DedicatedUsage (DocLineItem line_item_usage_type;
//     https://docs.aws.amazon.com/cur/latest/userguide/example-ec2-reservations.html);
//   - volume: a volume's EBS line (EBS:VolumeUsage..., EBS:VolumeIOUsage, EBS:VolumeP-IOPS, ...);
//   - load_balancer: a line of a load balancer's ARN.
func ResourceKindOf(l *ResourceLine) string {
	if l.UsageStart.IsZero() || !isResourceUsage(l.LineItemType) {
		return ""
	}
	id := l.ResourceID
	switch {
	case Like(id, instancePattern) && Like(l.UsageType, dataTransferPat):
		return KindDataTransfer
	case Like(id, instancePattern) && l.ProductCode == productEC2 &&
		(Like(l.UsageType, boxUsagePattern) || Like(l.UsageType, spotUsagePattern) || Like(l.UsageType, dedicatedPattern)):
		return KindInstance
	case Like(id, volumePattern) && Like(l.UsageType, ebsPattern):
		return KindVolume
	case Like(id, lbPattern):
		return KindLoadBalancer
	}
	return ""
}

const resourceKindSQL = `(CASE WHEN line_item_usage_start_date IS NULL OR NOT COALESCE(` + resourceUsageSQL + `, FALSE) THEN NULL` +
	` WHEN line_item_resource_id LIKE '` + instancePattern + `' AND line_item_usage_type LIKE '` + dataTransferPat + `' THEN '` + KindDataTransfer + `'` +
	` WHEN line_item_resource_id LIKE '` + instancePattern + `' AND line_item_product_code = '` + productEC2 + `' AND (line_item_usage_type LIKE '` + boxUsagePattern +
	`' OR line_item_usage_type LIKE '` + spotUsagePattern + `' OR line_item_usage_type LIKE '` + dedicatedPattern + `') THEN '` + KindInstance + `'` +
	` WHEN line_item_resource_id LIKE '` + volumePattern + `' AND line_item_usage_type LIKE '` + ebsPattern + `' THEN '` + KindVolume + `'` +
	` WHEN line_item_resource_id LIKE '` + lbPattern + `' THEN '` + KindLoadBalancer + `' END)`

// plus is a + sign*b with SQL's NULL: null when either is.
func plus(a, b NullFloat, sign float64) NullFloat {
	if !a.Valid || !b.Valid {
		return NullFloat{}
	}
	return Float(a.V + sign*b.V)
}

// amortizedBy is summary_view's amortized_cost CASE, in its order, over the given SP and RI
// effective cost, RIFee columns and other lines' (unblended) cost, gross or net.
func amortizedBy(l *ResourceLine, sp, ri, riUpfront, riRecurring, other NullFloat) NullFloat {
	switch l.LineItemType {
	case TypeSPCoveredUsage:
		return sp
	case TypeSPRecurringFee:
		return plus(l.SPTotalCommitment, l.SPUsedCommitment, -1)
	case TypeSPNegation, TypeSPUpfrontFee:
		return Float(0)
	case TypeDiscountedUsage:
		return ri
	case TypeRIFee:
		return plus(riUpfront, riRecurring, 1)
	}
	// SQL's <> '' is not true for a null ARN, nor here (null reads as "").
	if l.LineItemType == TypeFee && l.ReservationARN != "" {
		return Float(0)
	}
	if l.LineItemType == TypeRefund && l.ProductCode == productComputeSP && Like(l.Description, spRefundPattern) {
		return Float(0)
	}
	return other
}

func amortizedSQL(sp, ri, riUpfront, riRecurring, other string) string {
	return `(CASE WHEN line_item_line_item_type = '` + TypeSPCoveredUsage + `' THEN ` + sp +
		` WHEN line_item_line_item_type = '` + TypeSPRecurringFee + `' THEN (savings_plan_total_commitment_to_date - savings_plan_used_commitment)` +
		` WHEN line_item_line_item_type = '` + TypeSPNegation + `' THEN 0E0` +
		` WHEN line_item_line_item_type = '` + TypeSPUpfrontFee + `' THEN 0E0` +
		` WHEN line_item_line_item_type = '` + TypeDiscountedUsage + `' THEN ` + ri +
		` WHEN line_item_line_item_type = '` + TypeRIFee + `' THEN (` + riUpfront + ` + ` + riRecurring + `)` +
		` WHEN line_item_line_item_type = '` + TypeFee + `' AND reservation_reservation_a_r_n <> '' THEN 0E0` +
		` WHEN line_item_line_item_type = '` + TypeRefund + `' AND line_item_product_code = '` + productComputeSP +
		`' AND line_item_line_item_description LIKE '` + spRefundPattern + `' THEN 0E0` +
		` ELSE ` + other + ` END)`
}

// AmortizedCost is summary_view's amortized_cost of one line.
func AmortizedCost(l *ResourceLine) NullFloat {
	return amortizedBy(l, l.SPEffectiveCost, l.RIEffective, l.RIUnusedUpfront, l.RIUnusedRecurring, l.UnblendedCost)
}

var amortizedCostSQL = amortizedSQL("savings_plan_savings_plan_effective_cost", "reservation_effective_cost",
	"reservation_unused_amortized_upfront_fee_for_billing_period", "reservation_unused_recurring_fee", "line_item_unblended_cost")

// NetAmortizedCost is SCADNetAmortized: the same CASE on the net columns when
// line_item_net_unblended_cost is above 0, else (negative too, as the view has it)
// AmortizedCost.
func NetAmortizedCost(l *ResourceLine) NullFloat {
	if l.NetUnblendedCost.or0() > 0 {
		return amortizedBy(l, l.SPNetEffectiveCost, l.RINetEffective, l.RINetUnusedUpfront, l.RINetUnusedRecurring, l.NetUnblendedCost)
	}
	return AmortizedCost(l)
}

var netAmortizedCostSQL = `(CASE WHEN COALESCE(line_item_net_unblended_cost, 0E0) > 0E0 THEN ` +
	amortizedSQL("savings_plan_net_savings_plan_effective_cost", "reservation_net_effective_cost",
		"reservation_net_unused_amortized_upfront_fee_for_billing_period", "reservation_net_unused_recurring_fee", "line_item_net_unblended_cost") +
	` ELSE ` + amortizedCostSQL + ` END)`

// PublicCost is summary_view's public_cost: pricing_public_on_demand_cost, 0 on
// SavingsPlanNegation lines (the covered line has the hour's). A null type reads as "" here
// and in the SQL (COALESCE), where the view gives 0; no resource line lacks one.
func PublicCost(l *ResourceLine) NullFloat {
	if l.LineItemType != TypeSPNegation {
		return l.PublicOnDemand
	}
	return Float(0)
}

const publicCostSQL = `(CASE WHEN COALESCE(line_item_line_item_type, '') <> '` + TypeSPNegation + `' THEN pricing_public_on_demand_cost ELSE 0E0 END)`

// ResourceRules are the resource rules in ResourceDaySQL's column order. The cost rules are
// defined (and tested) on resource lines only (resource_kind not null).
func ResourceRules() []Rule[ResourceLine] {
	f := floatRule[ResourceLine]
	return []Rule[ResourceLine]{
		{"resource_kind", resourceKindSQL, DocLineItem + " line_item_resource_id, line_item_usage_type, line_item_line_item_type", func(l *ResourceLine) any { return ResourceKindOf(l) }},
		{"account_id", "line_item_usage_account_id", DocLineItem + " line_item_usage_account_id", func(l *ResourceLine) any { return l.Account }},
		{"region", "product_region_code", DocProduct + " product_region_code", func(l *ResourceLine) any { return l.RegionCode }},
		{"resource_id", "line_item_resource_id", DocLineItem + " line_item_resource_id", func(l *ResourceLine) any { return l.ResourceID }},
		{"usage_date", daySQL, DocLineItem + " line_item_usage_start_date", func(l *ResourceLine) any { return Day(&l.Line) }},
		{"amortized_cost", amortizedCostSQL, CIDSummaryView, f(AmortizedCost)},
		{"net_amortized_cost", netAmortizedCostSQL, SCADNetAmortized, f(NetAmortizedCost)},
		{"public_on_demand_cost", publicCostSQL, CIDSummaryView + "; " + DocPricing, f(PublicCost)},
		{"cluster_tag", clusterTagSQL, "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-resource-tags.html resource_tags",
			func(l *ResourceLine) any { return l.ClusterTag }},
	}
}

// ResourceDaySQL sums table's resource lines per ResourceKey, as Summary.Resources. A sum of
// nulls is 0; cluster_tag is ResourceCost.Cluster.
func ResourceDaySQL(table string) string {
	keys := "account_id, region, resource_id, resource_kind, usage_date"
	return groupSQL([]string{keys, sumAs("amortized_cost", "amortized_cost"), sumAs("net_amortized_cost", "net_amortized_cost"),
		sumAs("public_on_demand_cost", "public_on_demand_cost"), "COUNT(*) AS line_count, MIN(cluster_tag) AS cluster_tag"},
		selectSQL(nil, ResourceRules(), table, ""), "resource_lines", "resource_kind IS NOT NULL", keys)
}

// ParentsSQL sums table's EC2 pod lines with a parent per ParentKey (sca-eks), as
// Summary.Parents.
func ParentsSQL(table string) string {
	keys := "account_id, region, instance_id, usage_date"
	lines := selectSQL([]string{"split_line_item_parent_resource_id AS instance_id"}, Rules(), table,
		"line_item_operation = '"+OpEKSPodEC2+"' AND COALESCE(split_line_item_parent_resource_id, '') <> ''")
	return groupSQL([]string{keys + ", MIN(cluster_arn) AS cluster_arn", "split_part(MIN(cluster_arn), '/', 2) AS cluster_name",
		sumAs("split_cost", "split_cost") + ", " + sumAs("unused_cost", "unused_cost"),
		sumAs("net_split_cost", "net_split_cost") + ", " + sumAs("net_unused_cost", "net_unused_cost"), "COUNT(*) AS line_count"},
		lines, "parent_lines", "is_pod AND kind IS NOT NULL", keys)
}
