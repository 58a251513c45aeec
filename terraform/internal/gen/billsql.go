package gen

import (
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// kubecostIdleSQL is true for an archive row of Kubecost's idle: its name
// is schema.IdleName, or ends in "/" + IdleName (idle by node or cluster).
func kubecostIdleSQL() string {
	name := kubecostColumn("name")
	return fmt.Sprintf(`(%s = %s OR %s LIKE '%%/%s' ESCAPE '\')`, name, sqlString(schema.IdleName), name,
		strings.ReplaceAll(schema.IdleName, "_", `\_`))
}

// keys are the grouping keys of the per-namespace rows.
const keys = "account_id, region, cluster_arn, cluster_name, namespace, usage_date"

// kubecostSQL is the Kubecost side, one row per cluster, namespace and UTC
// day, from the pipeline's view (the archive, by the column contract).
//
// A row without a namespace is Kubecost's idle ("__idle__" as the last
// element of its name, schema.IdleName) or another namespace-less row,
// which Kubecost shows as __unallocated__ when it aggregates by namespace.
// Kubecost's compute is CPU + RAM + GPU with their adjustments, as
// Kubecost reports them: the __idle__ rows are in it, as the bill's unused
// cost is in the bill's; with shareIdle the idle is inside the namespaces'
// costs, and cpuCostIdle, ramCostIdle and gpuCostIdle say how much.
func kubecostSQL() string {
	k := kubecostColumn
	isIdle := kubecostIdleSQL()
	cost := func(c string) string { return fmt.Sprintf("(%s + %s)", k(c), k(c+"Adjustment")) }
	compute := fmt.Sprintf("(%s + %s + %s)", cost("cpuCost"), cost("ramCost"), cost("gpuCost"))
	rows := [][2]string{
		{k("account_id"), "account_id"},
		{k("region"), "region"},
		{k("properties.clusterid"), "cluster_arn"},
		{k("properties.eksClusterName"), "cluster_name"},
		{fmt.Sprintf("CASE WHEN %s <> '' THEN %s WHEN %s THEN %s ELSE %s END", k("properties.namespace"), k("properties.namespace"),
			isIdle, sqlString(schema.IdleName), sqlString(schema.UnallocatedName)), "namespace"},
		{fmt.Sprintf("CAST(%s AS DATE)", k("window.start")), "usage_date"},
		{cost("cpuCost"), "cpu"},
		{cost("ramCost"), "ram"},
		{cost("gpuCost"), "gpu"},
		{fmt.Sprintf("CASE WHEN %s THEN %s ELSE coalesce(%s, 0) + coalesce(%s, 0) + coalesce(%s, 0) END",
			isIdle, compute, k("cpuCostIdle"), k("ramCostIdle"), k("gpuCostIdle")), "idle"},
		{cost("pvCost"), "pv"},
		{fmt.Sprintf("(%s + %s)", k("networkCost"), k("networkCostAdjustment")), "network"},
		{cost("loadBalancerCost"), "lb"},
		{k("sharedCost"), "shared"},
		{k("totalCost"), "total"},
	}
	return "kubecost_rows AS (\n  SELECT\n" + selectList(rows) +
		"  FROM \"${database}\".\"${kubecost_view}\"\n),\n" +
		"kubecost AS (\n  SELECT " + keys + ",\n" + sums("cpu", "ram", "gpu", "idle", "pv", "network", "lb", "shared", "total") +
		"  FROM kubecost_rows\n  GROUP BY " + keys + "\n)"
}

// sums renders "    SUM(x) AS x" lines.
func sums(names ...string) string {
	items := make([][2]string, len(names))
	for i, n := range names {
		items[i] = [2]string{"SUM(" + n + ")", n}
	}
	return selectList(items)
}

// billSQL is the bill side, one row per cluster, namespace and UTC day,
// from the CUR 2.0 table: billSummarySQL, over the table's billing periods
// of the current month and the bill_months before it (a Trino-only filter;
// off when bill_months is null).
func billSQL() string {
	table := "(SELECT * FROM \"${cur_database}\".\"${cur_table}\"%{ if bill_months != null } WHERE \"billing_period\" >= " +
		"substr(CAST(date_add('month', -${bill_months}, current_date) AS varchar), 1, 7)%{ endif }) AS cur"
	return "bill AS (\n  SELECT " + keys + ",\n" + selectList([][2]string{
		{"split_cost", "split"},
		{"unused_cost", "unused"},
		{"net_split_cost", "net_split"},
		{"net_unused_cost", "net_unused"},
		{"split_cost_cpu + unused_cost_cpu", "cpu"},
		{"split_cost_memory + unused_cost_memory", "memory"},
		{"split_cost_gpu + unused_cost_gpu", "gpu"},
		{"public_on_demand_split_cost + public_on_demand_unused_cost", "public_on_demand"},
	}) + "  FROM (" + billSummarySQL(table) + "\n  ) AS summary\n)"
}

// namespaceDailySQL joins the two sides. A FULL OUTER JOIN keeps rows only
// one side has; present_in marks them. The key is the cluster ARN (account,
// region and name in one), never the name alone.
func namespaceDailySQL() string {
	coalesced := func(c string) [2]string { return [2]string{fmt.Sprintf("coalesce(k.%s, b.%s, s.%s)", c, c, c), c} }
	billCost := "CASE WHEN b.cluster_arn IS NULL THEN NULL ELSE coalesce(b.split, 0) + coalesce(b.unused, 0) END"
	billNet := "CASE WHEN b.cluster_arn IS NULL THEN NULL ELSE coalesce(b.net_split, 0) + coalesce(b.net_unused, 0) END"
	kCompute := "(k.cpu + k.ram + k.gpu)"
	items := [][2]string{
		coalesced("account_id"), coalesced("region"), coalesced("cluster_arn"), coalesced("cluster_name"),
		coalesced("namespace"), coalesced("usage_date"),
		{"CASE WHEN k.cluster_arn IS NULL THEN 'bill_only' WHEN b.cluster_arn IS NULL THEN 'kubecost_only' ELSE 'both' END", "present_in"},
		{"k.cpu", "kubecost_cpu_cost"},
		{"k.ram", "kubecost_ram_cost"},
		{"k.gpu", "kubecost_gpu_cost"},
		{kCompute, "kubecost_compute_cost"},
		{"k.idle", "kubecost_idle_cost"},
		{"k.pv", "kubecost_pv_cost"},
		{"k.network", "kubecost_network_cost"},
		{"k.lb", "kubecost_load_balancer_cost"},
		{"(k.pv + k.network + k.lb)", "kubecost_only_cost"},
		{"k.shared", "kubecost_shared_cost"},
		{"k.total", "kubecost_total_cost"},
		{"b.split", "bill_split_cost"},
		{"b.unused", "bill_unused_cost"},
		{billCost, "bill_cost"},
		{"b.net_split", "bill_net_split_cost"},
		{"b.net_unused", "bill_net_unused_cost"},
		{billNet, "bill_net_cost"},
		{"b.cpu", "bill_cpu_cost"},
		{"b.memory", "bill_memory_cost"},
		{"b.gpu", "bill_gpu_cost"},
		{"b.public_on_demand", "bill_public_on_demand_cost"},
	}
	items = append(items, stepItems()...)
	return "WITH\n" + kubecostSQL() + ",\n" + billSQL() + ",\n" + stepsSQL() + "\nSELECT\n" + selectList(items) +
		"FROM kubecost k\nFULL OUTER JOIN bill b\n" +
		"  ON k.cluster_arn = b.cluster_arn AND k.namespace = b.namespace AND k.usage_date = b.usage_date\n" +
		"FULL OUTER JOIN split_steps s\n" +
		"  ON s.cluster_arn = coalesce(k.cluster_arn, b.cluster_arn) AND s.namespace = coalesce(k.namespace, b.namespace)" +
		" AND s.usage_date = coalesce(k.usage_date, b.usage_date)\n" +
		"LEFT JOIN scad_on o\n" +
		"  ON o.cluster_arn = coalesce(k.cluster_arn, b.cluster_arn, s.cluster_arn) AND o.usage_date = coalesce(k.usage_date, b.usage_date, s.usage_date)\n" +
		"LEFT JOIN spread sp\n" +
		"  ON sp.cluster_arn = coalesce(k.cluster_arn, b.cluster_arn, s.cluster_arn) AND sp.namespace = coalesce(k.namespace, b.namespace, s.namespace)" +
		" AND sp.usage_date = coalesce(k.usage_date, b.usage_date, s.usage_date)\n"
}

// costSums sums the cost columns of a finer view; present_in says which
// side has any of the finer rows.
func costSums() [][2]string {
	items := [][2]string{{"CASE WHEN count_if(present_in <> 'bill_only') = 0 THEN 'bill_only' " +
		"WHEN count_if(present_in <> 'kubecost_only') = 0 THEN 'kubecost_only' ELSE 'both' END", "present_in"}}
	for _, c := range allCostColumns()[1:] {
		items = append(items, [2]string{"SUM(" + c.Name + ")", c.Name})
	}
	return append(items, [2]string{"coalesce(SUM(kubecost_idle_cost), 0) - coalesce(SUM(bill_unused_cost), 0)", "idle_difference"})
}

// clusterDailySQL sums the namespace view per cluster and day: Kubecost's
// idle (its __idle__ namespace and any shared idle) next to the bill's
// unused cost.
func clusterDailySQL() string {
	items := append(costSums(),
		[2]string{"count_if(present_in = 'both')", "namespaces_both"},
		[2]string{"count_if(present_in = 'kubecost_only')", "namespaces_kubecost_only"},
		[2]string{"count_if(present_in = 'bill_only')", "namespaces_bill_only"})
	group := "account_id, region, cluster_arn, cluster_name, usage_date"
	return "SELECT " + group + ",\n" + selectList(items) +
		"FROM \"${database}\".\"${prefix}_namespace_daily\"\nGROUP BY " + group + "\n"
}

// clusterMonthlySQL sums the cluster view per cluster and month. The month
// is the first seven characters of the ISO date, which both engines spell
// alike (date_format is Trino's, strftime DuckDB's).
func clusterMonthlySQL() string {
	month := "substr(CAST(usage_date AS varchar), 1, 7)"
	items := append(costSums(),
		[2]string{"count_if(present_in = 'both')", "days_both"},
		[2]string{"count_if(present_in = 'kubecost_only')", "days_kubecost_only"},
		[2]string{"count_if(present_in = 'bill_only')", "days_bill_only"})
	group := "account_id, region, cluster_arn, cluster_name"
	return "SELECT " + group + ", " + month + " AS billing_period,\n" + selectList(items) +
		"FROM \"${database}\".\"${prefix}_cluster_daily\"\nGROUP BY " + group + ", " + month + "\n"
}
