package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The bill views put the archive next to the AWS bill (issue 43): the
// Kubecost side reads the pipeline's view by the exporter's column
// contract (package schema), the bill side reads a CUR 2.0 table with
// split cost allocation data by AWS's data dictionary and the rules of
// billRules. Both are written into the SQL here, so a renamed contract
// column or CUR rule fails `make generate` instead of a query in Athena.
//
// The SQL is Athena engine 3 (Trino) and runs unchanged on DuckDB, which
// stands in for Athena in the tests: it keeps to what both engines spell
// alike (split_part, substr, length, ||, CAST(... AS DATE), LIKE ... ESCAPE,
// FULL OUTER JOIN, CASE, COALESCE, SUM). The one Trino-only piece, the
// billing period filter, is a template directive off when bill_months is
// null (the DuckDB tests render it so).

// Paths of the bill module's generated files, relative to the terraform
// directory.
const (
	BillModuleDir     = "modules/bill"
	BillViewsJSONPath = BillModuleDir + "/views.json"
)

// BillViewTemplatePath is the template of one bill view.
func BillViewTemplatePath(name string) string {
	return BillModuleDir + "/templates/" + name + ".sql.tftpl"
}

// ViewColumn is one column of a generated view, in every consumer's type.
type ViewColumn struct {
	Name       string `json:"name"`
	Glue       string `json:"glue"`
	Presto     string `json:"presto"`
	QuickSight string `json:"quicksight"`
	Doc        string `json:"doc"`
}

// BillView is one generated view: its SQL template (Terraform templatefile
// syntax, variables database, kubecost_view, cur_database, cur_table,
// prefix and bill_months) and its columns in order.
type BillView struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Columns     []ViewColumn `json:"columns"`
	SQL         string       `json:"-"`
}

func col(name, kind, doc string) ViewColumn {
	switch kind {
	case "double":
		return ViewColumn{name, "double", "double", "DECIMAL", doc}
	case "date":
		return ViewColumn{name, "date", "date", "DATETIME", doc}
	case "bigint":
		return ViewColumn{name, "bigint", "bigint", "INTEGER", doc}
	}
	return ViewColumn{name, "string", "varchar", "STRING", doc}
}

// kubecostColumn quotes a column of the archive's view: the contract's
// name, lowercased as the pipeline module's view names it. It panics on a
// name the contract lacks; BillViews recovers it into an error.
func kubecostColumn(name string) string {
	d := schema.Describe(nil, nil)
	for _, c := range append(d.Columns, d.PartitionKeys...) {
		if c.Name == name {
			return `"` + strings.ToLower(name) + `"`
		}
	}
	panic(fmt.Errorf("bill views: %q is not a column of the exporter's contract", name))
}

// keyColumns lead every view: the cluster (by account, region and ARN),
// its name, the namespace and the day.
func keyColumns(namespace bool) []ViewColumn {
	cols := []ViewColumn{
		col("account_id", "string", "AWS account of the cluster"),
		col("region", "string", "AWS region of the cluster"),
		col("cluster_arn", "string", "EKS cluster ARN: the archive's properties.clusterid, the bill's pod ARN with pod/ made cluster/; the join key"),
		col("cluster_name", "string", "cluster name"),
	}
	if namespace {
		cols = append(cols, col("namespace", "string", "Kubernetes namespace; __idle__ and __unallocated__ for Kubecost's rows without one"))
	}
	return cols
}

// costColumns follow the keys: each side's parts, the like-for-like
// totals and their difference. Kubecost's are null on bill_only rows and
// the bill's on kubecost_only rows: a side without the row has no number,
// which is not 0.
var costColumns = []ViewColumn{
	col("present_in", "string", "both, kubecost_only or bill_only: which side has the row"),
	col("kubecost_cpu_cost", "double", "Kubecost CPU cost with its adjustment (list prices, or Kubecost's own CUR reconciliation)"),
	col("kubecost_ram_cost", "double", "Kubecost RAM cost with its adjustment"),
	col("kubecost_gpu_cost", "double", "Kubecost GPU cost with its adjustment"),
	col("kubecost_compute_cost", "double", "CPU + RAM + GPU: what the bill's split and unused cost cover"),
	col("kubecost_idle_cost", "double", "Kubecost idle: the __idle__ rows' cost, or the idle shared into a namespace (cpuCostIdle + ramCostIdle + gpuCostIdle)"),
	col("kubecost_pv_cost", "double", "persistent volumes, with adjustment: not in split cost allocation data"),
	col("kubecost_network_cost", "double", "network, with adjustment: not in split cost allocation data"),
	col("kubecost_load_balancer_cost", "double", "load balancers, with adjustment: not in split cost allocation data"),
	col("kubecost_only_cost", "double", "PV + network + load balancer: what only Kubecost counts"),
	col("kubecost_shared_cost", "double", "Kubecost shared cost (sharedCost)"),
	col("kubecost_total_cost", "double", "Kubecost totalCost"),
	col("bill_split_cost", "double", "bill: split cost of the pods (EC2 split_line_item_split_cost; Fargate effective or unblended cost)"),
	col("bill_unused_cost", "double", "bill: the pods' share of their instances' unused capacity (split_line_item_unused_cost; 0 on Fargate)"),
	col("bill_cost", "double", "bill_split_cost + bill_unused_cost"),
	col("bill_net_split_cost", "double", "bill: split cost after discounts (net, amortized)"),
	col("bill_net_unused_cost", "double", "bill: unused cost after discounts"),
	col("bill_net_cost", "double", "bill_net_split_cost + bill_net_unused_cost"),
	col("bill_cpu_cost", "double", "bill: split + unused cost of the vCPU lines (next to kubecost_cpu_cost)"),
	col("bill_memory_cost", "double", "bill: split + unused cost of the memory lines (next to kubecost_ram_cost)"),
	col("bill_gpu_cost", "double", "bill: split + unused cost of the accelerator lines (next to kubecost_gpu_cost)"),
	col("bill_public_on_demand_cost", "double", "bill at public on-demand prices (split + unused): the bill's list price"),
}

// allCostColumns are costColumns and the waterfall's steps.
func allCostColumns() []ViewColumn {
	return append(append([]ViewColumn(nil), costColumns...), stepColumns...)
}

// BillViews renders the bill views.
func BillViews() (views []BillView, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	ns := BillView{
		Name:        "namespace_daily",
		Description: "Kubecost next to the AWS bill (split cost allocation data), per cluster, namespace and UTC day.",
		Columns: append(append(keyColumns(true), col("usage_date", "date", "UTC day")),
			allCostColumns()...),
		SQL: namespaceDailySQL(),
	}
	clusterCols := append(append(keyColumns(false), col("usage_date", "date", "UTC day")), allCostColumns()...)
	clusterCols = append(clusterCols,
		col("idle_difference", "double", "kubecost_idle_cost - bill_unused_cost: Kubecost's idle next to the bill's unused cost"),
		col("namespaces_both", "bigint", "namespaces both sides have"),
		col("namespaces_kubecost_only", "bigint", "namespaces only Kubecost has"),
		col("namespaces_bill_only", "bigint", "namespaces only the bill has"))
	cd := BillView{
		Name:        "cluster_daily",
		Description: "Kubecost next to the AWS bill per cluster and UTC day, with Kubecost's idle next to the bill's unused cost.",
		Columns:     clusterCols,
		SQL:         clusterDailySQL(),
	}
	monthCols := append(keyColumns(false), col("billing_period", "string", "month, YYYY-MM (UTC)"))
	monthCols = append(monthCols, allCostColumns()...)
	monthCols = append(monthCols,
		col("idle_difference", "double", "kubecost_idle_cost - bill_unused_cost"),
		col("days_both", "bigint", "days both sides have"),
		col("days_kubecost_only", "bigint", "days only Kubecost has"),
		col("days_bill_only", "bigint", "days only the bill has"))
	cm := BillView{
		Name:        "cluster_monthly",
		Description: "Kubecost next to the AWS bill per cluster and month: totals.",
		Columns:     monthCols,
		SQL:         clusterMonthlySQL(),
	}
	// split_daily first: namespace_daily reads it.
	return []BillView{splitView(), ns, cd, cm}, nil
}

// BillViewFiles are the generated files of the bill module: views.json
// (names, descriptions, columns) and one SQL template per view.
func BillViewFiles() ([]File, error) {
	views, err := BillViews()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(map[string]any{"views": views}, "", "  ")
	if err != nil {
		return nil, err
	}
	cur, err := curColumnsJSON()
	if err != nil {
		return nil, err
	}
	files := []File{{BillViewsJSONPath, append(b, '\n')}, {CURColumnsPath, cur}}
	for _, v := range views {
		files = append(files, File{BillViewTemplatePath(v.Name), []byte(v.SQL)})
	}
	return files, nil
}

// selectList renders "  expr AS name" lines.
func selectList(items [][2]string) string {
	var b bytes.Buffer
	for i, it := range items {
		sep := ","
		if i == len(items)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    %s AS %s%s\n", it[0], it[1], sep)
	}
	return b.String()
}
