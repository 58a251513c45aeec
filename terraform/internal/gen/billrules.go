package gen

import (
	"encoding/json"
	"strings"
)

// billSummarySQL sums the pod lines of a CUR 2.0 table per account,
// region, cluster, namespace and UTC day. Interim: the rules as AWS's SCAD
// dashboard view reads them, until exporter/cur holds their one
// definition.
func billSummarySQL(table string) string {
	id := `"line_item_resource_id"`
	p1 := "split_part(" + id + ", '/', 1)"
	ec2 := `"line_item_operation" = 'EKSPod-EC2'`
	spcu := `"line_item_line_item_type" = 'SavingsPlanCoveredUsage'`
	fargate := `CASE WHEN ` + spcu + ` THEN "savings_plan_savings_plan_effective_cost" ELSE "line_item_unblended_cost" END`
	fargateNet := `CASE WHEN "line_item_net_unblended_cost" > 0 THEN (CASE WHEN ` + spcu +
		` THEN "savings_plan_net_savings_plan_effective_cost" ELSE "line_item_net_unblended_cost" END) ELSE (` + fargate + `) END`
	netOr := func(net, gross string) string {
		return `CASE WHEN "` + net + `" > 0 THEN "` + net + `" ELSE "` + gross + `" END`
	}
	by := func(e, f string) string { return "CASE WHEN " + ec2 + " THEN " + e + " ELSE " + f + " END" }
	lines := []string{
		"split_part(" + id + ", ':', 5) AS account_id",
		"split_part(" + id + ", ':', 4) AS region",
		"split_part(" + id + ", '/', 2) AS cluster_name",
		"substr(" + p1 + ", 1, length(" + p1 + ") - 3) || 'cluster/' || split_part(" + id + ", '/', 2) AS cluster_arn",
		"split_part(" + id + ", '/', 3) AS namespace",
		`CAST("line_item_usage_start_date" AS DATE) AS usage_date`,
		by(`"split_line_item_split_cost"`, fargate) + " AS split_cost",
		by(`"split_line_item_unused_cost"`, "NULL") + " AS unused_cost",
		by(netOr("split_line_item_net_split_cost", "split_line_item_split_cost"), fargateNet) + " AS net_split_cost",
		by(netOr("split_line_item_net_unused_cost", "split_line_item_unused_cost"), "NULL") + " AS net_unused_cost",
		by(`"split_line_item_public_on_demand_split_cost"`, `"pricing_public_on_demand_cost"`) + " AS public_on_demand_split_cost",
		by(`"split_line_item_public_on_demand_unused_cost"`, "NULL") + " AS public_on_demand_unused_cost",
	}
	pod := "(" + id + ` LIKE 'arn:%:eks:%:pod/%' AND ((` + ec2 +
		` AND NOT (coalesce("split_line_item_parent_resource_id", '') = '' AND "split_line_item_split_cost" = 0))` +
		` OR ("line_item_operation" = 'FargatePod' AND ("line_item_usage_type" LIKE '%Fargate-vCPU-Hours:perCPU' OR "line_item_usage_type" LIKE '%Fargate-GB-Hours')` +
		` AND "line_item_line_item_type" IN ('SavingsPlanCoveredUsage', 'Usage'))))`
	sum := func(c string) string { return "COALESCE(SUM(" + c + "), 0E0) AS " + c }
	return "SELECT " + keys + ", " + strings.Join([]string{sum("split_cost"), sum("unused_cost"), sum("net_split_cost"),
		sum("net_unused_cost"), sum("public_on_demand_split_cost"), sum("public_on_demand_unused_cost")}, ", ") +
		"\nFROM (SELECT " + strings.Join(lines, ",\n  ") + "\nFROM " + table + "\nWHERE " + pod + ") AS lines\nGROUP BY " + keys
}

// CURColumnsPath is the cur-export module's column list.
const CURColumnsPath = "modules/cur-export/columns.json"

// curColumnsJSON lists the CUR 2.0 columns the export selects and its Glue
// table declares. Interim, until exporter/cur's column table.
func curColumnsJSON() ([]byte, error) {
	type c struct {
		Name string `json:"name"`
		Glue string `json:"glue"`
	}
	var cols []c
	for _, n := range []string{"identity_time_interval", "line_item_usage_account_id", "line_item_line_item_type", "line_item_operation",
		"line_item_resource_id", "line_item_usage_type"} {
		cols = append(cols, c{n, "string"})
	}
	cols = append(cols, c{"line_item_usage_start_date", "timestamp"})
	for _, n := range []string{"line_item_unblended_cost", "line_item_net_unblended_cost", "pricing_public_on_demand_cost",
		"savings_plan_savings_plan_effective_cost", "savings_plan_net_savings_plan_effective_cost"} {
		cols = append(cols, c{n, "double"})
	}
	cols = append(cols, c{"split_line_item_parent_resource_id", "string"})
	for _, n := range []string{"split_line_item_split_cost", "split_line_item_unused_cost", "split_line_item_net_split_cost",
		"split_line_item_net_unused_cost", "split_line_item_public_on_demand_split_cost", "split_line_item_public_on_demand_unused_cost"} {
		cols = append(cols, c{n, "double"})
	}
	cols = append(cols, c{"resource_tags", "map<string,string>"})
	b, err := json.MarshalIndent(map[string]any{"columns": cols}, "", "  ")
	return append(b, '\n'), err
}
