package billcheck

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// Kinds are the bill views in creation order: each reads the one before.
var Kinds = []string{"split_daily", "namespace_daily", "cluster_daily", "cluster_monthly"}

// View is one bill view as the bill module renders it.
type View struct{ Name, SQL string }

// Render evaluates the bill module in moduleDir (terraform/modules/bill)
// as Terraform would, for the views in database reading the archive's
// view kubecostView and the CUR table curDatabase.curTable, over every
// billing period (the period filter is Trino's; DuckDB has no date_add of
// that form). It returns the views by kind.
func Render(moduleDir, database, kubecostView, curDatabase, curTable string) (map[string]View, error) {
	m, err := tfeval.Load(moduleDir)
	if err != nil {
		return nil, err
	}
	obj := func(k, v string) cty.Value { return cty.ObjectVal(map[string]cty.Value{k: cty.StringVal(v)}) }
	s, err := m.Evaluate(tfeval.Inputs{
		Vars: map[string]cty.Value{
			"database_name":         cty.StringVal(database),
			"kubecost_view_name":    cty.StringVal(kubecostView),
			"cur_database_name":     cty.StringVal(curDatabase),
			"cur_table_name":        cty.StringVal(curTable),
			"cur_bucket_name":       cty.StringVal("cur-bucket"),
			"bill_retention_months": cty.NullVal(cty.Number),
		},
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.current": obj("account_id", "111122223333"),
			"data.aws_partition.current":       obj("partition", "aws"),
			"data.aws_region.current":          obj("id", "us-east-1"),
		},
	})
	if err != nil {
		return nil, err
	}
	views, err := s.Local("views")
	if err != nil {
		return nil, err
	}
	out := map[string]View{}
	for kind, v := range views.AsValueMap() {
		out[kind] = View{v.GetAttr("name").AsString(), v.GetAttr("sql").AsString()}
	}
	return out, nil
}

// CreateViews creates, in a DuckDB database (standing in for Athena), the
// archive's view main.kubecost_view over the Parquet files under
// archiveDir (the pipeline module's view: the contract's columns
// lowercased, and the partition keys), the CUR table cur.cur2 over the
// Data Export's files under exportDir, and the bill views in main. The
// session's time zone must be UTC, as Athena reads the files' UTC
// timestamps; db must hold one connection for that SET to last.
func CreateViews(db *sql.DB, moduleDir, archiveDir, exportDir string) (map[string]View, error) {
	return CreateViewsWith(db, moduleDir, archiveDir, exportDir, nil)
}

// CreateViewsWith is CreateViews with each view's SQL passed through edit
// first (nil: as rendered): the mutation tests change a rule and want a
// test to fail.
func CreateViewsWith(db *sql.DB, moduleDir, archiveDir, exportDir string, edit func(kind, sql string) string) (map[string]View, error) {
	var cols []string
	d := schema.Describe(nil, nil)
	for _, c := range append(d.Columns, d.PartitionKeys...) {
		cols = append(cols, fmt.Sprintf("%q AS %q", c.Name, strings.ToLower(c.Name)))
	}
	stmts := []string{
		"SET TimeZone = 'UTC'",
		fmt.Sprintf("CREATE VIEW main.kubecost_view AS SELECT %s FROM read_parquet('%s', hive_partitioning = true, hive_types_autocast = false)",
			strings.Join(cols, ", "), filepath.ToSlash(filepath.Join(archiveDir, "**", "*.parquet"))),
		"CREATE SCHEMA cur",
		fmt.Sprintf("CREATE VIEW cur.cur2 AS SELECT * FROM read_parquet('%s', hive_partitioning = true, hive_types_autocast = false)",
			filepath.ToSlash(filepath.Join(exportDir, "**", "*.parquet"))),
	}
	views, err := Render(moduleDir, "main", "kubecost_view", "cur", "cur2")
	if err != nil {
		return nil, err
	}
	for _, kind := range Kinds {
		q := views[kind].SQL
		if edit != nil {
			q = edit(kind, q)
		}
		stmts = append(stmts, fmt.Sprintf("CREATE VIEW main.%q AS\n%s", views[kind].Name, q))
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return nil, fmt.Errorf("billcheck: %w\n%s", err, s)
		}
	}
	return views, nil
}
