package bill

import (
	"fmt"
	"strings"
)

func podField(f func(Pod) string) func(*Line) any {
	return func(l *Line) any {
		p, _ := ParseResourceID(l.ResourceID)
		return f(p)
	}
}

func floatRule(f func(*Line) NullFloat) func(*Line) any { return func(l *Line) any { return f(l) } }

// Rules returns every rule, in the order of LinesSQL's columns. The Go
// side of the pod fields is only defined where is_pod holds (elsewhere
// Go says "" and SQL may say something else); the test compares them on
// pod lines, and every other rule on every line.
func Rules() []Rule {
	view := SCADView
	return []Rule{
		{"is_pod", isPodSQL, view + " WHERE clause; " + DocSCAD, func(l *Line) any { return IsPod(l) }},
		{"account_id", accountSQL, DocSCAD + " (pod ARN)", podField(func(p Pod) string { return p.Account })},
		{"region", regionSQL, DocSCAD + " (pod ARN)", podField(func(p Pod) string { return p.Region })},
		{"cluster_name", clusterSQL, view + " cluster_arn", podField(func(p Pod) string { return p.Cluster })},
		{"cluster_arn", clusterARNSQL, view + " cluster_arn", podField(func(p Pod) string { return p.ClusterARN })},
		{"namespace", namespaceSQL, view + " namespace", podField(func(p Pod) string { return p.Namespace })},
		{"pod", podNameSQL, DocSCAD + " (pod ARN)", podField(func(p Pod) string { return p.Name })},
		{"usage_date", daySQL, DocLineItem + " line_item_usage_start_date", func(l *Line) any { return Day(l) }},
		{"kind", kindSQL, view + " *_cpu_cost / *_memory_cost / *_gpu_cost usage type patterns", func(l *Line) any { return KindOf(l).String() }},
		{"split_cost", byLaunchSQL("split_line_item_split_cost", fargateCostSQL), view + " amortized_split_*_cost; " + DocSplit, floatRule(SplitCost)},
		{"unused_cost", byLaunchSQL("split_line_item_unused_cost", "NULL"), view + " amortized_split_unused_*_cost; " + DocSplit, floatRule(UnusedCost)},
		{"net_split_cost", byLaunchSQL(netOrSQL("split_line_item_net_split_cost", "split_line_item_split_cost"), fargateNetSQL), view + " net_amortized_split_*_cost; " + DocSplit, floatRule(NetSplitCost)},
		{"net_unused_cost", byLaunchSQL(netOrSQL("split_line_item_net_unused_cost", "split_line_item_unused_cost"), "NULL"), view + " net_amortized_split_unused_*_cost; " + DocSplit, floatRule(NetUnusedCost)},
		{"public_on_demand_split_cost", byLaunchSQL("split_line_item_public_on_demand_split_cost",
			`(CASE WHEN line_item_usage_type LIKE '`+spotPattern+`' THEN line_item_unblended_cost ELSE pricing_public_on_demand_cost END)`),
			view + " public_on_demand_split_*_cost; " + DocPricing, floatRule(PublicOnDemandSplit)},
		{"public_on_demand_unused_cost", byLaunchSQL("split_line_item_public_on_demand_unused_cost", "NULL"), view + " public_on_demand_split_unused_*_cost; " + DocSplit, floatRule(PublicOnDemandUnused)},
	}
}

// LinesSQL is a SELECT of every rule's column (Rules' names) for every
// line of table, pod or not (filter on is_pod). table is pasted as is:
// a quoted name, or read_parquet(...) on DuckDB.
func LinesSQL(table string) string { return linesSQL(table, "") }

func linesSQL(table, where string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, r := range Rules() {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		fmt.Fprintf(&b, "%s AS %s", r.SQL, r.Name)
	}
	fmt.Fprintf(&b, "\nFROM %s", table)
	if where != "" {
		fmt.Fprintf(&b, "\nWHERE %s", where)
	}
	return b.String()
}

// Measure is one of the summed costs, by the name of its rule.
type Measure int

// The measures of a summary row, in column order.
const (
	MSplit Measure = iota
	MUnused
	MNetSplit
	MNetUnused
	MPublicOnDemandSplit
	MPublicOnDemandUnused
	NumMeasures
)

var measureNames = [NumMeasures]string{"split_cost", "unused_cost", "net_split_cost", "net_unused_cost",
	"public_on_demand_split_cost", "public_on_demand_unused_cost"}

// String is the measure's rule and column name, e.g. split_cost.
func (m Measure) String() string { return measureNames[m] }

var measureFuncs = [NumMeasures]func(*Line) NullFloat{SplitCost, UnusedCost, NetSplitCost, NetUnusedCost, PublicOnDemandSplit, PublicOnDemandUnused}

// Summary columns: the key columns, then per measure its total and its
// value per kind (<measure>_cpu, <measure>_memory, <measure>_gpu), then
// the number of lines.
var SummaryKeyColumns = []string{"account_id", "region", "cluster_name", "cluster_arn", "namespace", "usage_date"}

const SummaryLinesColumn = "line_count"

// SummaryColumns returns every column of SummarySQL in order.
func SummaryColumns() []string {
	out := append([]string(nil), SummaryKeyColumns...)
	for m := range NumMeasures {
		out = append(out, m.String())
		for k := range Kind(NumKinds) {
			out = append(out, m.String()+"_"+k.String())
		}
	}
	return append(out, SummaryLinesColumn)
}

// podOperationsSQL is implied by is_pod; written on the table's own
// column it lets Athena (and DuckDB) skip row groups and pages by the
// column's statistics and dictionary before any rule is evaluated.
const podOperationsSQL = "line_item_operation IN ('" + OpEKSPodEC2 + "', '" + OpFargatePod + "')"

// SummarySQL sums the pod lines of table per account, region, cluster,
// namespace and UTC day: what Read computes. A sum over lines that are
// all null is 0 (COALESCE on the SUM, not on the lines). Lines of no kind
// are left out, as they add to none of the view's columns.
func SummarySQL(table string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(strings.Join(SummaryKeyColumns, ", "))
	for m := range NumMeasures {
		fmt.Fprintf(&b, ",\n  COALESCE(SUM(%s), 0E0) AS %s", m, m)
		for k := range Kind(NumKinds) {
			fmt.Fprintf(&b, ",\n  COALESCE(SUM(CASE WHEN kind = '%s' THEN %s END), 0E0) AS %s_%s", k, m, m, k)
		}
	}
	fmt.Fprintf(&b, ",\n  COUNT(*) AS %s\nFROM (%s\n) AS pod_lines\nWHERE is_pod AND kind IS NOT NULL\nGROUP BY %s",
		SummaryLinesColumn, linesSQL(table, podOperationsSQL), strings.Join(SummaryKeyColumns, ", "))
	return b.String()
}
