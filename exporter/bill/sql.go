package bill

import "strings"

func podField(f func(Pod) string) func(*Line) any {
	return func(l *Line) any {
		p, _ := ParseResourceID(l.ResourceID)
		return f(p)
	}
}

func floatRule[L any](f func(*L) NullFloat) func(*L) any { return func(l *L) any { return f(l) } }

// Rules returns every rule, in the order of SummarySQL's lines' columns. The pod fields'
// Go side is defined only where is_pod holds (the test compares them on pod lines only).
func Rules() []Rule[Line] {
	view := SCADView
	return []Rule[Line]{
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

// selectSQL selects the head columns and every rule's column from table, WHERE where if set.
func selectSQL[L any](head []string, rules []Rule[L], table, where string) string {
	cols := head
	for _, r := range rules {
		cols = append(cols, r.SQL+" AS "+r.Name)
	}
	s := "SELECT " + strings.Join(cols, ",\n  ") + "\nFROM " + table
	if where != "" {
		s += "\nWHERE " + where
	}
	return s
}

// groupSQL sums lines (a SELECT, named alias) where where holds, per keys: every summing
// view's shape; sel is the select list, one entry a line.
func groupSQL(sel []string, lines, alias, where, keys string) string {
	return "SELECT " + strings.Join(sel, ",\n  ") + "\nFROM (" + lines + "\n) AS " + alias +
		"\nWHERE " + where + "\nGROUP BY " + keys
}

// sumAs is a SUM of col that is 0 over nulls only, named as.
func sumAs(col, as string) string { return "COALESCE(SUM(" + col + "), 0E0) AS " + as }

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

// SummaryKeyColumns are the first columns of a summary row; then come per measure its total
// and its value per kind (<measure>_cpu, ...), then SummaryLinesColumn.
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

// podOperationsSQL is implied by is_pod; on the table's own column it lets Athena and DuckDB
// skip row groups and pages by statistics and dictionary before any rule runs.
const podOperationsSQL = "line_item_operation IN ('" + OpEKSPodEC2 + "', '" + OpFargatePod + "')"

// SummarySQL sums the pod lines of table per account, region, cluster, namespace and UTC
// day, as Read does. A sum of nulls is 0 (COALESCE on the SUM); lines of no kind are left out
// (they add to none of the view's columns).
func SummarySQL(table string) string {
	keys := strings.Join(SummaryKeyColumns, ", ")
	sel := []string{keys}
	for m := range NumMeasures {
		sel = append(sel, sumAs(m.String(), m.String()))
		for k := range Kind(NumKinds) {
			sel = append(sel, sumAs("CASE WHEN kind = '"+k.String()+"' THEN "+m.String()+" END", m.String()+"_"+k.String()))
		}
	}
	sel = append(sel, "COUNT(*) AS "+SummaryLinesColumn)
	return groupSQL(sel, selectSQL(nil, Rules(), table, podOperationsSQL), "pod_lines", "is_pod AND kind IS NOT NULL", keys)
}
