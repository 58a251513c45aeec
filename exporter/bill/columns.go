package bill

// Pages of the CUR 2.0 data dictionary that define the columns below.
const (
	DocBill        = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-bill.html"
	DocIdentity    = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-identity.html"
	DocLineItem    = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-line-item.html"
	DocPricing     = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-pricing.html"
	DocProduct     = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-product.html"
	DocTags        = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-resource-tags.html"
	DocSavingsPlan = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-savings-plan.html"
	DocReservation = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-reservation.html"
	DocSplit       = "https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-split-line-item.html"
	DocSCAD        = "https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html"
	// SCADView is AWS's own reading of these columns, which rules.go restates (repository,
	// commit, path and view in the string).
	SCADView = "aws-solutions-library-samples/cloud-intelligence-dashboards-framework@9cecc158b81504344cf96b38d5918b6953b2e97d:dashboards/scad-containers-cost-allocation/scad-containers-cost-allocation.yaml (scad_cca_summary_view)"
)

// Types of the columns, Athena/Glue's and the Parquet type the fixture writes: CUR 2.0 has
// costs as doubles, dates as timestamps, resource_tags and product as map<string,string>. The
// dictionary states no timestamp unit or UTC flag: the reader accepts milli-, micro- and
// nanoseconds, UTC-adjusted or not, and reads UTC either way.
const (
	AthenaString    = "string"
	AthenaDouble    = "double"
	AthenaTimestamp = "timestamp"
	AthenaMap       = "map<string,string>"

	ParquetString    = "BYTE_ARRAY (STRING)"
	ParquetDouble    = "DOUBLE"
	ParquetTimestamp = "INT64 (TIMESTAMP(MILLIS, isAdjustedToUTC=true))"
	ParquetMap       = "MAP<BYTE_ARRAY (STRING), BYTE_ARRAY (STRING)>"
)

// Column is one column of the CUR 2.0 table.
type Column struct {
	Name    string // as the Data Export writes it (snake_case)
	Athena  string // Athena/Glue type
	Parquet string // Parquet physical (logical) type
	Meaning string // what it holds, in the dictionary's words where short
	Doc     string // the dictionary page that defines it
	// Read: the reader decodes it; the others are written by the fixture because a real
	// export has them (the views may show them), but no rule needs them.
	Read bool
}

// Column names the rules and the reader use.
const (
	ColUsageAccountID        = "line_item_usage_account_id"
	ColLineItemType          = "line_item_line_item_type"
	ColOperation             = "line_item_operation"
	ColProductCode           = "line_item_product_code"
	ColResourceID            = "line_item_resource_id"
	ColUsageType             = "line_item_usage_type"
	ColUsageStart            = "line_item_usage_start_date"
	ColUnblendedCost         = "line_item_unblended_cost"
	ColNetUnblendedCost      = "line_item_net_unblended_cost"
	ColPublicOnDemandCost    = "pricing_public_on_demand_cost"
	ColSPEffectiveCost       = "savings_plan_savings_plan_effective_cost"
	ColSPNetEffectiveCost    = "savings_plan_net_savings_plan_effective_cost"
	ColParentResourceID      = "split_line_item_parent_resource_id"
	ColSplitCost             = "split_line_item_split_cost"
	ColUnusedCost            = "split_line_item_unused_cost"
	ColNetSplitCost          = "split_line_item_net_split_cost"
	ColNetUnusedCost         = "split_line_item_net_unused_cost"
	ColPublicOnDemandSplit   = "split_line_item_public_on_demand_split_cost"
	ColPublicOnDemandUnused  = "split_line_item_public_on_demand_unused_cost"
	ColResourceTags          = "resource_tags"
	ColReservationARN        = "reservation_reservation_a_r_n"
	ColReservationEffective  = "reservation_effective_cost"
	ColDescription           = "line_item_line_item_description"
	ColRegionCode            = "product_region_code"
	ColRINetEffective        = "reservation_net_effective_cost"
	ColRIUnusedUpfront       = "reservation_unused_amortized_upfront_fee_for_billing_period"
	ColRIUnusedRecurring     = "reservation_unused_recurring_fee"
	ColRINetUnusedUpfront    = "reservation_net_unused_amortized_upfront_fee_for_billing_period"
	ColRINetUnusedRecurring  = "reservation_net_unused_recurring_fee"
	ColSPTotalCommitment     = "savings_plan_total_commitment_to_date"
	ColSPUsedCommitment      = "savings_plan_used_commitment"
	billingPeriodPartPrefix  = "BILLING_PERIOD=" // the Data Export's partition folder, BILLING_PERIOD=YYYY-MM
	billingPeriodValueLayout = "2006-01"
)

func str(name, meaning, doc string, read bool) Column {
	return Column{name, AthenaString, ParquetString, meaning, doc, read}
}

func dbl(name, meaning, doc string, read bool) Column {
	return Column{name, AthenaDouble, ParquetDouble, meaning, doc, read}
}

// Columns returns the CUR 2.0 columns known, in the fixture's order; a fresh slice each call.
func Columns() []Column {
	return []Column{
		{"bill_billing_period_start_date", AthenaTimestamp, ParquetTimestamp, "start of the billing period (UTC)", DocBill, false},
		str("identity_time_interval", "the line's time interval, ISO 8601 start/end (UTC)", DocIdentity, false),
		str(ColUsageAccountID, "the account that used the resource", DocLineItem, true),
		str(ColLineItemType, "Usage, DiscountedUsage (RI), SavingsPlanCoveredUsage, Tax, Credit, ...", DocLineItem, true),
		str(ColOperation, "the operation: EKSPod-EC2 and FargatePod for EKS pods, RunInstances..., ECSTask-EC2, FargateTask", DocLineItem, true),
		str(ColProductCode, "the service: AmazonEC2, AmazonEKS, AWSDataTransfer, AWSELB, ...", DocLineItem, true),
		str(ColResourceID, "the resource; for a pod arn:<partition>:eks:<region>:<account>:pod/<cluster>/<namespace>/<pod>/<uid>", DocLineItem, true),
		str(ColUsageType, "usage type; for pods <region>-EKS-EC2-vCPU-Hours, -EKS-EC2-GB-Hours, -EKS-EC2-Accelerator-Hours, -Fargate-vCPU-Hours:perCPU, -Fargate-GB-Hours", DocLineItem, true),
		{ColUsageStart, AthenaTimestamp, ParquetTimestamp, "start of the usage (UTC, inclusive); its UTC day is the line's day", DocLineItem, true},
		{"line_item_usage_end_date", AthenaTimestamp, ParquetTimestamp, "end of the usage (UTC, exclusive)", DocLineItem, false},
		dbl("line_item_usage_amount", "usage in the usage type's unit", DocLineItem, false),
		dbl(ColUnblendedCost, "cost at the unblended rate; Fargate pod lines' cost", DocLineItem, true),
		dbl(ColNetUnblendedCost, "unblended cost after discounts; present only with discounts", DocLineItem, true),
		dbl(ColPublicOnDemandCost, "cost at the public on-demand rate", DocPricing, true),
		str(ColReservationARN, "the Reserved Instance that covered the line", DocReservation, true),
		dbl(ColReservationEffective, "amortized cost of a Reserved Instance covered line", DocReservation, true),
		str("savings_plan_savings_plan_a_r_n", "the Savings Plan that covered the line", DocSavingsPlan, false),
		dbl(ColSPEffectiveCost, "amortized cost of a Savings Plan covered line", DocSavingsPlan, true),
		dbl(ColSPNetEffectiveCost, "the Savings Plan effective cost after discounts", DocSavingsPlan, true),
		str(ColParentResourceID, "the EC2 instance a pod line was split from", DocSplit, true),
		dbl("split_line_item_split_usage_ratio", "the pod's share of the instance's vCPU or memory", DocSplit, false),
		dbl(ColSplitCost, "the pod's share of its instance's cost (the SCAD view sums it as amortized cost)", DocSplit, true),
		dbl(ColUnusedCost, "the instance's unused cost, shared among its pods by their share", DocSplit, true),
		dbl(ColNetSplitCost, "split cost after discounts", DocSplit, true),
		dbl(ColNetUnusedCost, "unused cost after discounts", DocSplit, true),
		dbl(ColPublicOnDemandSplit, "split cost at the public on-demand rate", DocSplit, true),
		dbl(ColPublicOnDemandUnused, "unused cost at the public on-demand rate", DocSplit, true),
		{ColResourceTags, AthenaMap, ParquetMap, "cost allocation tags; for pods aws_eks_cluster_name, aws_eks_namespace, aws_eks_workload_name, ... and user_<label>", DocTags, false},
		{"product", AthenaMap, ParquetMap, "product attributes (instance_type, vcpu, memory, gpu, ...)", DocProduct, false},
		// The resource-level lines' columns (resource.go), read by summary_view's amortized rule.
		str(ColDescription, "the line's description; the summary_view's Savings Plan refund rule reads it", DocLineItem, true),
		str(ColRegionCode, "the AWS Region of the usage (us-east-1, ...)", DocProduct, true),
		dbl(ColRINetEffective, "the Reserved Instance effective cost after discounts", DocReservation, true),
		dbl(ColRIUnusedUpfront, "the upfront fee of the period's unused reservation hours, amortized (RIFee lines)", DocReservation, true),
		dbl(ColRIUnusedRecurring, "the recurring fee of the period's unused reservation hours (RIFee lines)", DocReservation, true),
		dbl(ColRINetUnusedUpfront, "the unused amortized upfront fee after discounts", DocReservation, true),
		dbl(ColRINetUnusedRecurring, "the unused recurring fee after discounts", DocReservation, true),
		dbl(ColSPTotalCommitment, "the Savings Plan's commitment to date (SavingsPlanRecurringFee lines)", DocSavingsPlan, true),
		dbl(ColSPUsedCommitment, "the Savings Plan's commitment used (SavingsPlanRecurringFee lines)", DocSavingsPlan, true),
	}
}

// ReadColumns returns the names of the columns the reader decodes.
func ReadColumns() []string {
	var out []string
	for _, c := range Columns() {
		if c.Read {
			out = append(out, c.Name)
		}
	}
	return out
}
