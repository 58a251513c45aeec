package dashboards

import (
	"fmt"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

type sheet struct {
	title  string
	panels []panel
}

const from = `FROM "${database}"."${view}"`

// where limits every query to the dashboard's time range and clusters.
func where() string {
	return fmt.Sprintf(`WHERE $__timeFilter(%s) AND %s IN (${cluster:singlequote})`, q("window.start"), q("properties.eksClusterName"))
}

func day() string { return fmt.Sprintf(`date_trunc('day', %s)`, q("window.start")) }

// The QuickSight dashboard's calculated fields, in SQL.
func workload() string {
	return fmt.Sprintf(`CASE WHEN coalesce(%[1]s, '') = '' THEN concat(%[2]s, '/', %[3]s) ELSE concat(%[2]s, '/', %[1]s) END`,
		q("properties.controller"), q("properties.namespace"), q("properties.pod"))
}

func capacityType() string {
	c := q("properties.node_capacity_type")
	return fmt.Sprintf(`CASE WHEN coalesce(%[1]s, '') = '' THEN '(unknown)' ELSE upper(replace(%[1]s, '-', '_')) END`, c)
}

func instanceType() string {
	return fmt.Sprintf(`coalesce(nullif(%s, ''), '(unknown)')`, q("properties.node_instance_type"))
}

func labelValue() string {
	return fmt.Sprintf(`coalesce(nullif(%s, ''), '(unset)')`, q(schema.LabelPrefix+LabelVar))
}

// efficiency is usage over request, weighted by minutes, in percent.
func efficiency(usage, request string) string {
	return fmt.Sprintf(`100 * sum(%[1]s * %[3]s) / nullif(sum(%[2]s * %[3]s), 0)`, q(usage), q(request), q("minutes"))
}

func cost() string { return fmt.Sprintf(`sum(%s)`, q("totalCost")) }

// daily is a time series of cost per group, one series per group value.
func daily(group string) string {
	return fmt.Sprintf(`SELECT %s AS time, %s AS series, %s AS cost %s %s GROUP BY 1, 2 ORDER BY 1`, day(), group, cost(), from, where())
}

// top ranks groups by cost.
func top(group, name string, n int) string {
	return fmt.Sprintf(`SELECT %s AS "%s", %s AS cost %s %s GROUP BY 1 ORDER BY 2 DESC LIMIT %d`, group, name, cost(), from, where(), n)
}

func stat(title, sql, unit string) panel {
	return panel{title: title, kind: "stat", format: table, sql: sql, w: 8, h: 4, unit: unit}
}

func bars(title, sql string) panel {
	return panel{title: title, kind: "bargauge", format: table, sql: sql, w: 12, h: 10, unit: "currencyUSD",
		options: map[string]any{"orientation": "horizontal", "displayMode": "basic", "reduceOptions": map[string]any{"values": true, "calcs": []string{}}}}
}

func tbl(title, sql string) panel {
	return panel{title: title, kind: "table", format: table, sql: sql, w: 24, h: 10}
}

func series(title, sql, unit string) panel {
	return panel{title: title, kind: "timeseries", format: timeSeries, sql: sql, w: 12, h: 9, unit: unit}
}

func sheets() []sheet {
	ns, cl := q("properties.namespace"), q("properties.eksClusterName")
	return []sheet{
		{"Cost over time", []panel{
			stat("Total cost", fmt.Sprintf(`SELECT %s AS "Total cost" %s %s`, cost(), from, where()), "currencyUSD"),
			stat("Clusters", fmt.Sprintf(`SELECT count(DISTINCT %s) AS "Clusters" %s %s`, cl, from, where()), "none"),
			stat("Namespaces", fmt.Sprintf(`SELECT count(DISTINCT %s) AS "Namespaces" %s %s`, ns, from, where()), "none"),
			series("Daily cost by cluster", daily(cl), "currencyUSD"),
			series("Daily cost by namespace (top 10)", fmt.Sprintf(
				`WITH t AS (SELECT %[1]s AS ns %[2]s %[3]s GROUP BY 1 ORDER BY sum(%[4]s) DESC LIMIT 10) `+
					`SELECT %[5]s AS time, CASE WHEN %[1]s IN (SELECT ns FROM t) THEN %[1]s ELSE '(other)' END AS series, %[6]s AS cost %[2]s %[3]s GROUP BY 1, 2 ORDER BY 1`,
				ns, from, where(), q("totalCost"), day(), cost()), "currencyUSD"),
			tbl("Cost by cluster and namespace", fmt.Sprintf(`SELECT %s AS cluster, %s AS namespace, %s AS cost %s %s GROUP BY 1, 2 ORDER BY 3 DESC`, cl, ns, cost(), from, where())),
		}},
		{"Top workloads", []panel{
			bars("Top 20 workloads by cost", top(workload(), "workload", 20)),
			bars("Top 20 namespaces by cost", top(ns, "namespace", 20)),
			tbl("Workloads", fmt.Sprintf(`SELECT %s AS workload, %s AS kind, %s AS cost, sum(%s) AS cpu_cost, sum(%s) AS ram_cost, sum(%s) AS pv_cost, sum(%s) AS network_cost %s %s GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 500`,
				workload(), q("properties.controllerKind"), cost(), q("cpuCost"), q("ramCost"), q("pvCost"), q("networkCost"), from, where())),
			tbl("Pods", fmt.Sprintf(`SELECT %s AS namespace, %s AS pod, %s AS node, %s AS cost %s %s GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 500`,
				ns, q("properties.pod"), q("properties.node"), cost(), from, where())),
		}},
		{"CPU and RAM efficiency", []panel{
			stat("CPU efficiency (% of requests used)", fmt.Sprintf(`SELECT %s AS "CPU efficiency" %s %s`, efficiency("cpuCoreUsageAverage", "cpuCoreRequestAverage"), from, where()), "percent"),
			stat("RAM efficiency (% of requests used)", fmt.Sprintf(`SELECT %s AS "RAM efficiency" %s %s`, efficiency("ramByteUsageAverage", "ramByteRequestAverage"), from, where()), "percent"),
			series("Daily CPU and RAM efficiency (%)", fmt.Sprintf(`SELECT %s AS time, %s AS cpu, %s AS ram %s %s GROUP BY 1 ORDER BY 1`,
				day(), efficiency("cpuCoreUsageAverage", "cpuCoreRequestAverage"), efficiency("ramByteUsageAverage", "ramByteRequestAverage"), from, where()), "percent"),
			{title: "Least efficient namespaces (CPU %)", kind: "bargauge", format: table, w: 12, h: 9, unit: "percent",
				sql: fmt.Sprintf(`SELECT %s AS namespace, %s AS cpu_efficiency %s %s GROUP BY 1 HAVING sum(%s) > 0 ORDER BY 2 ASC LIMIT 20`,
					ns, efficiency("cpuCoreUsageAverage", "cpuCoreRequestAverage"), from, where(), q("cpuCoreRequestAverage")),
				options: map[string]any{"orientation": "horizontal", "displayMode": "basic", "reduceOptions": map[string]any{"values": true, "calcs": []string{}}}},
			tbl("Requests and usage by workload", fmt.Sprintf(`SELECT %s AS workload, avg(%s) AS cpu_request_cores, avg(%s) AS cpu_usage_cores, avg(%s) AS ram_request_bytes, avg(%s) AS ram_usage_bytes, %s AS cpu_efficiency, %s AS ram_efficiency, %s AS cost %s %s GROUP BY 1 ORDER BY 8 DESC LIMIT 500`,
				workload(), q("cpuCoreRequestAverage"), q("cpuCoreUsageAverage"), q("ramByteRequestAverage"), q("ramByteUsageAverage"),
				efficiency("cpuCoreUsageAverage", "cpuCoreRequestAverage"), efficiency("ramByteUsageAverage", "ramByteRequestAverage"), cost(), from, where())),
		}},
		{"Cost by label", []panel{
			bars("Cost by label value (top 20)", top(labelValue(), "label value", 20)),
			series("Daily cost by label value", daily(labelValue()), "currencyUSD"),
			tbl("Cost by label value and namespace", fmt.Sprintf(`SELECT %s AS label_value, %s AS namespace, %s AS cost %s %s GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 500`, labelValue(), ns, cost(), from, where())),
		}},
		{"Capacity and instance types", []panel{
			{title: "Cost by capacity type", kind: "piechart", format: table, w: 12, h: 9, unit: "currencyUSD", sql: top(capacityType(), "capacity type", 10),
				options: map[string]any{"reduceOptions": map[string]any{"values": true, "calcs": []string{}}, "pieType": "donut"}},
			bars("Cost by instance type (top 20)", top(instanceType(), "instance type", 20)),
			series("Daily cost by capacity type", daily(capacityType()), "currencyUSD"),
			tbl("Cost by instance type, capacity type and node group", fmt.Sprintf(`SELECT %s AS instance_type, %s AS capacity_type, %s AS node_group, %s AS cost %s %s GROUP BY 1, 2, 3 ORDER BY 4 DESC`,
				instanceType(), capacityType(), q("properties.node_nodegroup"), cost(), from, where())),
		}},
	}
}
