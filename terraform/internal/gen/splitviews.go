package gen

// splitColumns are <prefix>_split_daily's columns (the interface the
// FOCUS view and the report build on).
var splitColumns = []ViewColumn{
	col("account_id", "string", "AWS account of the cluster (the bill's usage account for bill_only rows)"),
	col("region", "string", "AWS region of the cluster"),
	col("cluster_arn", "string", "EKS cluster ARN (the archive's properties.clusterid; SCAD's pod ARN for bill_only rows)"),
	col("cluster", "string", "cluster name"),
	col("usage_date", "date", "UTC day"),
	col("resource_kind", "string", "instance, volume, data_transfer or load_balancer"),
	col("resource_id", "string", "the bill's line_item_resource_id (i-..., vol-...); null for a Kubecost row without a bill resource"),
	col("node", "string", "Kubernetes node ('' for bill_only rows)"),
	col("namespace", "string", "namespace; __idle__ for the node's idle row, __unallocated__ for rows without one and bill_only rows"),
	col("controller_kind", "string", "Kubecost's controllerKind"),
	col("controller", "string", "Kubecost's controller"),
	col("pod", "string", "pod"),
	{Name: "is_idle", Glue: "boolean", Presto: "boolean", QuickSight: "BOOLEAN", Doc: "the node's idle row (namespace __idle__)"},
	col("share", "double", "Kubecost's share of the resource-day: CPU + RAM + GPU cost (instances), network cost (data transfer), PV cost (volumes); the shares of a matched resource-day sum to 1"),
	col("kubecost_cost", "double", "Kubecost's own (list-priced, with adjustments) cost of the row"),
	col("public_on_demand_cost", "double", "the bill's public on-demand cost of the resource-day times share (null when unmatched)"),
	col("amortized_cost", "double", "the bill's amortized cost (Cloud Intelligence Dashboards summary_view rule) times share (null when unmatched)"),
	col("net_cost", "double", "the bill's net amortized cost times share (null when unmatched)"),
	col("price_basis", "string", "bill (the bill's cost) or list (Kubecost's number kept: no bill line maps)"),
	col("present_in", "string", "both, kubecost_only (no bill line) or bill_only (the bill's instance no Kubecost node names)"),
}

// splitView is <prefix>_split_daily.
func splitView() BillView {
	return BillView{
		Name:        "split_daily",
		Description: "Kubecost's split of the AWS bill: each instance's, volume's and data transfer's bill cost per UTC day given to Kubecost's allocations by Kubecost's shares.",
		Columns:     splitColumns,
		SQL:         splitDailySQL(),
	}
}

// stepColumns replace difference and net_difference (issue 46): they add
// up, kubecost_cost + pricing_step + discounts_step + negotiated_step =
// split_bill_cost, and split_bill_cost + idle_spread_step +
// split_weights_step = scad_cost (exporter/split.Steps).
var stepColumns = []ViewColumn{
	col("kubecost_cost", "double", "Kubecost at its own prices, of the rows the bill prices (price_basis bill)"),
	col("pricing_step", "double", "Kubecost's split at the bill's public on-demand cost, less kubecost_cost: Kubecost's price table against AWS's"),
	col("discounts_step", "double", "the split at amortized cost less at public on-demand: Reserved Instances, Savings Plans, Spot"),
	col("negotiated_step", "double", "the split at net amortized cost less at amortized: EDP, credits"),
	col("split_bill_cost", "double", "Kubecost's split of the bill, net amortized"),
	col("idle_spread_step", "double", "where SCAD is on: each node's idle row spread over its pods by their shares, as SCAD spreads unused cost; else 0"),
	col("split_weights_step", "double", "where SCAD is on: the rest of the way to scad_cost (SCAD's weights against Kubecost's shares, and what SCAD splits that Kubecost's bill split does not, such as Fargate); else 0"),
	col("scad_cost", "double", "where SCAD is on: SCAD's net split + unused cost plus the split's volumes and data transfer (which SCAD does not split); else split_bill_cost"),
	col("split_bill_amortized_cost", "double", "Kubecost's split of the bill at amortized cost (before negotiated_step)"),
	col("list_priced_cost", "double", "Kubecost's number of the rows no bill line prices (price_basis list), never in the steps"),
}
