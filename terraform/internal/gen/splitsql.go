package gen

import (
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
)

// The split view (issue 46): Kubecost's split of the bill, one row per
// allocated charge, as exporter/split computes it in Go (the rules are
// documented there; the tests hold the two equal on DuckDB).
//
// The providerID's instance and a PV's volume are the id after the last
// '/' (regexp_extract, which Trino and DuckDB spell alike; Trino returns
// NULL where DuckDB returns '' for no match, and NULLIF makes both NULL).
// An allocation's pvs map is read whole, one row per key: UNNEST of
// map_keys(pvs), an array of strings (one column in both engines), and
// the entry by subscript, pvs[key].field. UNNEST of the map itself or of
// its values is not written: Trino expands a map into key and value and
// an array of rows into one column per field
// (https://trino.io/docs/current/sql/select.html#unnest), where DuckDB
// refuses a map and gives an array of structs as one struct column. The
// map subscript is Trino's [] operator on maps
// (https://trino.io/docs/current/functions/map.html) and DuckDB's.

const (
	instanceIDPattern = `(^|/)(i-[^/]+)$`
	volumeIDPattern   = `(^|/)(vol-[^/]+)$`
)

// curTable is the CUR 2.0 table over the retained billing periods.
func curTable() string {
	return "(SELECT * FROM \"${cur_database}\".\"${cur_table}\"%{ if bill_months != null } WHERE \"billing_period\" >= " +
		"substr(CAST(date_add('month', -${bill_months}, current_date) AS varchar), 1, 7)%{ endif }) AS cur"
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// allocKeys group Kubecost's rows as split.Merge does.
const allocKeys = "account_id, region, cluster_arn, cluster, usage_date, node, namespace, controller_kind, controller, pod, is_idle"

const (
	nodeKeys       = clusterDayKeys + ", node"
	clusterDayKeys = "account_id, region, cluster_arn, cluster, usage_date"
)

func splitKubecostSQL() string {
	k := kubecostColumn
	isIdle := kubecostIdleSQL()
	cost := func(c string) string { return fmt.Sprintf("(%s + %s)", k(c), k(c+"Adjustment")) }
	rows := [][2]string{
		{k("account_id"), "account_id"},
		{k("region"), "region"},
		{k("properties.clusterid"), "cluster_arn"},
		{k("properties.eksClusterName"), "cluster"},
		{fmt.Sprintf("CAST(%s AS DATE)", k("window.start")), "usage_date"},
		{fmt.Sprintf("COALESCE(%s, '')", k("properties.node")), "node"},
		{fmt.Sprintf("NULLIF(regexp_extract(COALESCE(%s, ''), '%s', 2), '')", k("properties.providerID"), instanceIDPattern), "instance_id"},
		{fmt.Sprintf("CASE WHEN %s <> '' THEN %s WHEN %s THEN %s ELSE %s END", k("properties.namespace"), k("properties.namespace"),
			isIdle, sqlString(schema.IdleName), sqlString(schema.UnallocatedName)), "namespace"},
		{fmt.Sprintf("COALESCE(%s, '')", k("properties.controllerKind")), "controller_kind"},
		{fmt.Sprintf("COALESCE(%s, '')", k("properties.controller")), "controller"},
		{fmt.Sprintf("COALESCE(%s, '')", k("properties.pod")), "pod"},
		{fmt.Sprintf("(%s = '' AND %s)", k("properties.namespace"), isIdle), "is_idle"},
		{fmt.Sprintf("(%s + %s + %s)", cost("cpuCost"), cost("ramCost"), cost("gpuCost")), "compute"},
		{fmt.Sprintf("(%s + %s)", k("networkCost"), k("networkCostAdjustment")), "network"},
		{cost("loadBalancerCost"), "lb"},
		{k("pvs"), "pvs"},
	}
	return "split_kubecost_rows AS (\n  SELECT\n" + selectList(rows) + "  FROM \"${database}\".\"${kubecost_view}\"\n),\n" +
		"allocs AS (\n  SELECT " + allocKeys + ",\n    SUM(compute) AS compute, SUM(network) AS network, SUM(lb) AS lb, MAX(instance_id) AS instance_id\n" +
		"  FROM split_kubecost_rows\n  GROUP BY " + allocKeys + "\n),\n" +
		"nodes AS (\n  SELECT " + nodeKeys + ",\n    MAX(instance_id) AS instance_id, SUM(compute) AS compute, SUM(network) AS network, COUNT(*) AS n\n" +
		"  FROM allocs\n  GROUP BY " + nodeKeys + "\n),\n" +
		"pv_entries AS (\n  SELECT " + allocKeys + ",\n" +
		"    NULLIF(regexp_extract(COALESCE(pv_provider_id, ''), '" + volumeIDPattern + "', 2), '') AS volume_id,\n" +
		"    COALESCE(pv_cost, 0E0) + COALESCE(pv_adjustment, 0E0) AS cost\n" +
		"  FROM (\n    SELECT kr.*, kr.pvs[pk.pv_key].providerID AS pv_provider_id, kr.pvs[pk.pv_key].cost AS pv_cost,\n" +
		"      kr.pvs[pk.pv_key].adjustment AS pv_adjustment\n" +
		"    FROM split_kubecost_rows kr CROSS JOIN UNNEST(map_keys(kr.pvs)) AS pk(pv_key)\n  ) AS e\n),\n" +
		"pv_allocs AS (\n  SELECT " + allocKeys + ", volume_id, SUM(cost) AS cost\n  FROM pv_entries\n  GROUP BY " + allocKeys + ", volume_id\n),\n" +
		"volumes AS (\n  SELECT " + clusterDayKeys + ", volume_id, SUM(cost) AS cost, COUNT(*) AS n\n" +
		"  FROM pv_allocs\n  WHERE volume_id IS NOT NULL\n  GROUP BY " + clusterDayKeys + ", volume_id\n)"
}

// splitOut renders the view's columns of one part; share is an
// expression, the bill's costs are r.* times it.
type splitPart struct {
	from, kind, resourceID, share, kubecost, where string
	billed                                         bool // r joined: matched when r.resource_id is not null
}

func (p splitPart) sql() string {
	cost := func(c string) string {
		if !p.billed {
			return "CAST(NULL AS DOUBLE)"
		}
		return "(" + p.share + ") * r." + c
	}
	basis, present := sqlString(split.BasisList), sqlString(split.KubecostOnly)
	if p.billed {
		basis = "CASE WHEN r.resource_id IS NULL THEN " + sqlString(split.BasisList) + " ELSE " + sqlString(split.BasisBill) + " END"
		present = "CASE WHEN r.resource_id IS NULL THEN " + sqlString(split.KubecostOnly) + " ELSE " + sqlString(split.Both) + " END"
	}
	items := [][2]string{
		{"a.account_id", "account_id"}, {"a.region", "region"}, {"a.cluster_arn", "cluster_arn"}, {"a.cluster", "cluster"},
		{"a.usage_date", "usage_date"}, {sqlString(p.kind), "resource_kind"}, {p.resourceID, "resource_id"}, {"a.node", "node"},
		{"a.namespace", "namespace"}, {"a.controller_kind", "controller_kind"}, {"a.controller", "controller"}, {"a.pod", "pod"},
		{"a.is_idle", "is_idle"}, {"CAST(" + p.share + " AS DOUBLE)", "share"}, {"CAST(" + p.kubecost + " AS DOUBLE)", "kubecost_cost"},
		{cost("public_on_demand_cost"), "public_on_demand_cost"}, {cost("amortized_cost"), "amortized_cost"},
		{cost("net_amortized_cost"), "net_cost"}, {basis, "price_basis"}, {present, "present_in"},
	}
	s := "  SELECT\n" + selectList(items) + "  FROM " + p.from + "\n"
	if p.where != "" {
		s += "  WHERE " + p.where + "\n"
	}
	return s
}

func resourceJoin(kind, id string) string {
	return "LEFT JOIN resources r ON r.resource_kind = " + sqlString(kind) + " AND r.resource_id = " + id +
		" AND r.account_id = a.account_id AND r.region = a.region AND r.usage_date = a.usage_date"
}

const nodeJoin = "allocs a JOIN nodes nd ON nd.account_id = a.account_id AND nd.region = a.region AND nd.cluster_arn = a.cluster_arn" +
	" AND nd.cluster = a.cluster AND nd.usage_date = a.usage_date AND nd.node = a.node"

// splitDailySQL is <prefix>_split_daily.
func splitDailySQL() string {
	parts := []splitPart{
		{from: nodeJoin + "\n  " + resourceJoin(bill.KindInstance, "nd.instance_id"), kind: bill.KindInstance, resourceID: "nd.instance_id",
			share: "CASE WHEN nd.compute = 0E0 THEN 1E0 / nd.n ELSE a.compute / nd.compute END", kubecost: "a.compute", billed: true},
		{from: nodeJoin + "\n  " + resourceJoin(bill.KindDataTransfer, "nd.instance_id"), kind: bill.KindDataTransfer, resourceID: "nd.instance_id",
			share:    "CASE WHEN nd.network <> 0E0 THEN a.network / nd.network WHEN nd.compute <> 0E0 THEN a.compute / nd.compute ELSE 1E0 / nd.n END",
			kubecost: "a.network", billed: true, where: "r.resource_id IS NOT NULL OR nd.network <> 0E0"},
		{from: "pv_allocs a JOIN volumes v ON v.account_id = a.account_id AND v.region = a.region AND v.cluster_arn = a.cluster_arn" +
			" AND v.cluster = a.cluster AND v.usage_date = a.usage_date AND v.volume_id = a.volume_id\n  " + resourceJoin(bill.KindVolume, "v.volume_id"),
			kind: bill.KindVolume, resourceID: "v.volume_id", share: "CASE WHEN v.cost = 0E0 THEN 1E0 / v.n ELSE a.cost / v.cost END",
			kubecost: "a.cost", billed: true},
		{from: "pv_allocs a", kind: bill.KindVolume, resourceID: "CAST(NULL AS VARCHAR)", share: "1E0", kubecost: "a.cost", where: "a.volume_id IS NULL"},
		{from: "allocs a", kind: bill.KindLoadBalancer, resourceID: "CAST(NULL AS VARCHAR)", share: "1E0", kubecost: "a.lb", where: "a.lb <> 0E0"},
	}
	var b strings.Builder
	b.WriteString("WITH\n" + splitKubecostSQL() + ",\n")
	b.WriteString("resources AS (\n" + bill.ResourceDaySQL(curTable()) + "\n),\n")
	b.WriteString("parents AS (\n" + bill.ParentsSQL(curTable()) + "\n)\n")
	for i, p := range parts {
		if i > 0 {
			b.WriteString("UNION ALL\n")
		}
		b.WriteString(p.sql())
	}
	b.WriteString("UNION ALL\n" + billOnlySQL())
	b.WriteString("UNION ALL\n" + billOnlyVolumesSQL())
	return b.String()
}

// billOnlySQL: instances (and their data transfer) that SCAD's pod lines
// put in a cluster and no node of the archive names.
func billOnlySQL() string {
	return "  SELECT\n" + selectList(billOnlyItems("p", "p.cluster_name")) +
		"  FROM resources r JOIN parents p ON p.instance_id = r.resource_id AND p.account_id = r.account_id AND p.region = r.region AND p.usage_date = r.usage_date\n" +
		"  WHERE r.resource_kind IN (" + sqlString(bill.KindInstance) + ", " + sqlString(bill.KindDataTransfer) + ")\n" +
		"    AND NOT EXISTS (SELECT 1 FROM nodes nd WHERE nd.instance_id = r.resource_id AND nd.account_id = r.account_id" +
		" AND nd.region = r.region AND nd.usage_date = r.usage_date)\n"
}

// billOnlyItems is the select list of a bill-only row: the cluster's columns from owner (its
// name from cluster), the resource's from r, and an unallocated row priced by the bill.
func billOnlyItems(owner, cluster string) [][2]string {
	return [][2]string{
		{owner + ".account_id", "account_id"}, {owner + ".region", "region"}, {owner + ".cluster_arn", "cluster_arn"}, {cluster, "cluster"},
		{"r.usage_date", "usage_date"}, {"r.resource_kind", "resource_kind"}, {"r.resource_id", "resource_id"}, {"''", "node"},
		{sqlString(schema.UnallocatedName), "namespace"}, {"''", "controller_kind"}, {"''", "controller"}, {"''", "pod"},
		{"FALSE", "is_idle"}, {"1E0", "share"}, {"0E0", "kubecost_cost"},
		{"r.public_on_demand_cost", "public_on_demand_cost"}, {"r.amortized_cost", "amortized_cost"}, {"r.net_amortized_cost", "net_cost"},
		{sqlString(split.BasisBill), "price_basis"}, {sqlString(split.BillOnly), "present_in"},
	}
}

// billOnlyVolumesSQL: volumes whose tags name a cluster of the archive
// that day (resources' cluster_tag, by name in the account and region; the
// least ARN of that name) and that no PV of the archive names, as
// split.billOnlyVolumes.
func billOnlyVolumesSQL() string {
	return "  SELECT\n" + selectList(billOnlyItems("c", "c.cluster")) +
		"  FROM resources r JOIN (\n    SELECT account_id, region, cluster, usage_date, MIN(cluster_arn) AS cluster_arn FROM allocs" +
		" GROUP BY account_id, region, cluster, usage_date\n  ) AS c ON c.account_id = r.account_id AND c.region = r.region" +
		" AND c.cluster = r.cluster_tag AND c.usage_date = r.usage_date\n" +
		"  WHERE r.resource_kind = " + sqlString(bill.KindVolume) + "\n" +
		"    AND NOT EXISTS (SELECT 1 FROM volumes v WHERE v.volume_id = r.resource_id AND v.account_id = r.account_id" +
		" AND v.region = r.region AND v.usage_date = r.usage_date)\n"
}

// stepsSQL sums <prefix>_split_daily per namespace-day (split_steps), the
// idle spread of the matched instances (spread; namespace_daily keeps it
// where SCAD is on), and
// which cluster-days have SCAD (scad_on: any pod line of the bill), as
// split.NamespaceStepsOn.
func stepsSQL() string {
	billed := func(c string) string {
		return "SUM(CASE WHEN price_basis = " + sqlString(split.BasisBill) + " THEN " + c + " ELSE 0E0 END)"
	}
	nsKeys := "account_id, region, cluster_arn, cluster, namespace, usage_date"
	matched := "s.resource_kind = " + sqlString(bill.KindInstance) + " AND s.present_in = " + sqlString(split.Both)
	instKeys := "s.account_id, s.region, s.cluster_arn, s.usage_date, s.resource_id"
	return "split_steps AS (\n  SELECT account_id, region, cluster_arn, cluster AS cluster_name, namespace, usage_date,\n" + selectList([][2]string{
		{billed("kubecost_cost"), "kubecost"},
		{billed("public_on_demand_cost"), "public_on_demand"},
		{billed("amortized_cost"), "amortized"},
		{billed("net_cost"), "net"},
		{"SUM(CASE WHEN price_basis = " + sqlString(split.BasisBill) + " AND resource_kind <> " + sqlString(bill.KindInstance) + " THEN net_cost ELSE 0E0 END)", "rest"},
		{"SUM(CASE WHEN price_basis = " + sqlString(split.BasisList) + " THEN kubecost_cost ELSE 0E0 END)", "list_priced"},
	}) + "  FROM \"${database}\".\"${prefix}_split_daily\"\n  GROUP BY " + nsKeys + "\n),\n" +
		"scad_on AS (\n  SELECT DISTINCT cluster_arn, usage_date FROM bill\n),\n" +
		"instance_idle AS (\n  SELECT " + instKeys + ",\n" +
		"    SUM(CASE WHEN s.is_idle THEN s.net_cost ELSE 0E0 END) AS idle,\n" +
		"    SUM(CASE WHEN s.is_idle THEN 0E0 ELSE s.share END) AS pod_share\n" +
		"  FROM \"${database}\".\"${prefix}_split_daily\" s\n  WHERE " + matched + "\n  GROUP BY " + instKeys + "\n),\n" +
		"spread AS (\n  SELECT s.cluster_arn, s.namespace, s.usage_date,\n" +
		"    SUM(CASE WHEN s.is_idle THEN -s.net_cost ELSE ii.idle * s.share / ii.pod_share END) AS idle_spread\n" +
		"  FROM \"${database}\".\"${prefix}_split_daily\" s\n" +
		"  JOIN instance_idle ii ON ii.account_id = s.account_id AND ii.region = s.region AND ii.cluster_arn = s.cluster_arn" +
		" AND ii.usage_date = s.usage_date AND ii.resource_id = s.resource_id\n" +
		"  WHERE " + matched + " AND ii.pod_share <> 0E0\n  GROUP BY s.cluster_arn, s.namespace, s.usage_date\n)"
}

// stepItems are namespace_daily's step columns (stepColumns' order).
func stepItems() [][2]string {
	scad := "coalesce(b.net_split, 0E0) + coalesce(b.net_unused, 0E0) + coalesce(s.rest, 0E0)"
	net := "coalesce(s.net, 0E0)"
	spread := "CASE WHEN o.cluster_arn IS NULL THEN 0E0 ELSE coalesce(sp.idle_spread, 0E0) END"
	return [][2]string{
		{"coalesce(s.kubecost, 0E0)", "kubecost_cost"},
		{"coalesce(s.public_on_demand, 0E0) - coalesce(s.kubecost, 0E0)", "pricing_step"},
		{"coalesce(s.amortized, 0E0) - coalesce(s.public_on_demand, 0E0)", "discounts_step"},
		{net + " - coalesce(s.amortized, 0E0)", "negotiated_step"},
		{net, "split_bill_cost"},
		{spread, "idle_spread_step"},
		{"CASE WHEN o.cluster_arn IS NULL THEN 0E0 ELSE " + scad + " - " + net + " - (" + spread + ") END", "split_weights_step"},
		{"CASE WHEN o.cluster_arn IS NULL THEN " + net + " ELSE " + scad + " END", "scad_cost"},
		{"coalesce(s.amortized, 0E0)", "split_bill_amortized_cost"},
		{"coalesce(s.list_priced, 0E0)", "list_priced_cost"},
	}
}
