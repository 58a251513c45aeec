package gen

import (
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The FOCUS views' SQL, Athena engine 3 (Trino) that runs unchanged on
// DuckDB (the tests' stand-in), in the same spelling the bill views keep
// to. Template variables: database, split_view, focus_database,
// focus_table and prefix.
//
// The grain of an allocated charge is the workload (controller, or the
// pod itself when it has none) per origin charge: pods come and go with
// every rollout, so a pod grain multiplies rows without telling a FinOps
// reader more, while the workload is what a team is charged for, stays
// the same name across days, and is unique within one origin charge as
// FOCUS asks of AllocatedResourceId (CAU-AllocatedResourceId-C-008-O).

// focusWorkloadKind and focusWorkloadName name the workload of a split row.
const (
	focusWorkloadKind = "CASE WHEN is_idle THEN '" + schema.IdleName + "' WHEN coalesce(controller, '') <> '' " +
		"THEN coalesce(nullif(lower(controller_kind), ''), 'controller') ELSE 'pod' END"
	focusWorkloadName = "CASE WHEN is_idle THEN '" + schema.IdleName + "' WHEN coalesce(controller, '') <> '' THEN controller ELSE pod END"
)

// focusMatchTolerance is how far a resource-day's shares may be from 1 for
// its origin charges to be replaced; one that is not stays in the
// replaced view as the export has it, and the check kit reports it.
const focusMatchTolerance = "1e-9"

// focusSplitCTEs are the split's rows at the workload grain and the
// resource-days whose shares add up to 1. Rows without a bill resource
// (Kubecost only) have no origin charge and stay out.
func focusSplitCTEs() string {
	return "workloads AS (\n  SELECT cluster_arn, cluster, usage_date, resource_kind, resource_id, namespace, is_idle,\n" +
		"    " + focusWorkloadKind + " AS workload_kind,\n" +
		"    " + focusWorkloadName + " AS workload,\n" +
		"    max(node) AS node,\n    SUM(share) AS share\n" +
		"  FROM \"${database}\".\"${split_view}\"\n" +
		"  WHERE resource_id IS NOT NULL AND share IS NOT NULL AND present_in <> 'kubecost_only'\n" +
		"  GROUP BY cluster_arn, cluster, usage_date, resource_kind, resource_id, namespace, is_idle, " +
		focusWorkloadKind + ", " + focusWorkloadName + "\n),\n" +
		"matched AS (\n  SELECT resource_id, usage_date, resource_kind\n  FROM workloads\n  GROUP BY resource_id, usage_date, resource_kind\n" +
		"  HAVING abs(SUM(share) - 1) <= " + focusMatchTolerance + "\n)"
}

// jsonString renders a SQL string expression as a JSON string literal.
func jsonString(expr string) string {
	return `'"' || replace(replace(` + expr + `, '\', '\\'), '"', '\"') || '"'`
}

// focusAllocatedItems are the select items of an allocated charge: the
// origin charge o's columns (summable ones times w.share), then FOCUS
// 1.3's columns and the Kubernetes context.
func focusAllocatedItems() [][2]string {
	var items [][2]string
	for _, c := range FocusExportColumns() {
		e := "o." + c.Name
		if c.Kind == focusSum {
			e = "o." + c.Name + " * w.share"
		}
		items = append(items, [2]string{e, c.Name})
	}
	idle := "w.is_idle"
	resID := fmt.Sprintf("CASE WHEN %s THEN NULL ELSE w.cluster_arn || '/' || w.namespace || '/' || w.workload_kind || '/' || w.workload END", idle)
	resName := fmt.Sprintf("CASE WHEN %s THEN NULL ELSE w.namespace || '/' || w.workload END", idle)
	tags := fmt.Sprintf(`CASE WHEN %s THEN NULL ELSE '{"%scluster":' || %s || ',"%snamespace":' || %s || ',"%sworkload-kind":' || %s || ',"%sworkload":' || %s || '}' END`,
		idle, FocusTagPrefix, jsonString("w.cluster_arn"), FocusTagPrefix, jsonString("w.namespace"),
		FocusTagPrefix, jsonString("w.workload_kind"), FocusTagPrefix, jsonString("w.workload"))
	return append(items,
		[2]string{"o.ProviderName", "ServiceProviderName"},
		[2]string{"o.ProviderName", "HostProviderName"},
		[2]string{"'" + FocusMethodID + "'", "AllocatedMethodId"},
		[2]string{`'{"Elements":[{"AllocatedRatio":' || CAST(w.share AS varchar) || '}]}'`, "AllocatedMethodDetails"},
		[2]string{resID, "AllocatedResourceId"},
		[2]string{resName, "AllocatedResourceName"},
		[2]string{tags, "AllocatedTags"},
		[2]string{"w.cluster_arn", "x_ClusterArn"},
		[2]string{"w.cluster", "x_ClusterName"},
		[2]string{"w.namespace", "x_Namespace"},
		[2]string{"w.workload_kind", "x_ControllerKind"},
		[2]string{"w.workload", "x_Controller"},
		[2]string{"w.node", "x_Node"},
		[2]string{"w.resource_kind", "x_ResourceKind"},
		[2]string{"w.share", "x_AllocatedShare"},
	)
}

// focusOrigin is the join of the export's origin charges (usage lines of a
// resource, by its id, the UTC day of the charge period and its kind by
// exporter/bill's FocusKindOf, which only usage lines have: an instance's hours and its data transfer
// share the instance's id and are split apart) with the split's workloads
// of that resource-day and kind.
var focusOrigin = "FROM \"${focus_database}\".\"${focus_table}\" o\n" +
	"JOIN workloads w ON o.ResourceId = w.resource_id AND CAST(o.ChargePeriodStart AS DATE) = w.usage_date\n" +
	"  AND " + bill.FocusKindSQL("o.") + " = w.resource_kind\n" +
	"JOIN matched m ON m.resource_id = w.resource_id AND m.usage_date = w.usage_date AND m.resource_kind = w.resource_kind\n"

func focusSQL() string {
	return "WITH\n" + focusSplitCTEs() + "\nSELECT\n" + selectList(focusAllocatedItems()) + focusOrigin
}

// focusReplacedSQL is every line of the export that is not an origin charge
// of a matched resource-day, as the export has it (no allocation columns),
// and the allocated charges of the focus view in place of the others.
func focusReplacedSQL() string {
	var kept, names []string
	for _, c := range FocusExportColumns() {
		kept = append(kept, "e."+c.Name)
		names = append(names, c.Name)
	}
	kept = append(kept, "e.ProviderName", "e.ProviderName")
	for _, a := range focusAddedColumns()[2:] {
		t := "varchar"
		if a.Col.Type == "double" {
			t = "double"
		}
		kept = append(kept, "CAST(NULL AS "+t+")")
	}
	for _, a := range focusAddedColumns() {
		names = append(names, a.Col.Name)
	}
	items := make([][2]string, len(kept))
	for i := range kept {
		items[i] = [2]string{kept[i], names[i]}
	}
	return "WITH\n" + focusSplitCTEs() + "\nSELECT\n" + selectList(items) +
		"FROM \"${focus_database}\".\"${focus_table}\" e\n" +
		"LEFT JOIN matched m ON e.ResourceId = m.resource_id AND CAST(e.ChargePeriodStart AS DATE) = m.usage_date\n" +
		"  AND " + bill.FocusKindSQL("e.") + " = m.resource_kind\n" +
		"WHERE m.resource_id IS NULL\n" +
		"UNION ALL\nSELECT " + strings.Join(names, ", ") + "\nFROM \"${database}\".\"${prefix}_focus\"\n"
}
