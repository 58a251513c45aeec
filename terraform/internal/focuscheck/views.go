package focuscheck

import (
	"database/sql"
	"fmt"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// Kinds are the FOCUS views in creation order: focus_replaced reads focus.
var Kinds = []string{"focus", "focus_replaced"}

// View is one FOCUS view as the bill-focus module renders it.
type View struct{ Name, SQL string }

// Render evaluates the bill-focus module in moduleDir as Terraform would,
// for views in database over the split view <prefix>_split_daily and the
// FOCUS table focusDatabase.focusTable. It returns the views by kind.
func Render(moduleDir, database, focusDatabase, focusTable string) (map[string]View, error) {
	return RenderVars(moduleDir, map[string]string{
		"database_name": database, "focus_database_name": focusDatabase,
		"focus_table_name": focusTable, "focus_bucket_name": "focus-bucket",
	})
}

// RenderVars evaluates the bill-focus module in moduleDir with the string
// variables vars, and returns the views by kind.
func RenderVars(moduleDir string, vars map[string]string) (map[string]View, error) {
	m, err := tfeval.Load(moduleDir)
	if err != nil {
		return nil, err
	}
	obj := func(k, v string) cty.Value { return cty.ObjectVal(map[string]cty.Value{k: cty.StringVal(v)}) }
	in := map[string]cty.Value{}
	for k, v := range vars {
		in[k] = cty.StringVal(v)
	}
	s, err := m.Evaluate(tfeval.Inputs{
		Vars: in,
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

// Names of what CreateViews creates.
const (
	SplitTable  = `main."kubecost_bill_split_daily"`
	ExportTable = `focusexport.focus`
)

// CreateViews creates, in a DuckDB database standing in for Athena, the
// split's view as a table of split rows, the FOCUS table
// focusexport.focus over the export's Parquet files under exportDir, and
// the FOCUS views in main. db must hold one connection for the session's
// UTC time zone to last.
func CreateViews(db *sql.DB, moduleDir, exportDir string, split []SplitRow) (map[string]View, error) {
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		return nil, fmt.Errorf("focuscheck: %w", err)
	}
	if err := CreateSplitDaily(db, SplitTable, split); err != nil {
		return nil, err
	}
	return CreateOverSplit(db, moduleDir, exportDir)
}

// CreateOverSplit creates the FOCUS table focusexport.focus over the
// export's Parquet files under exportDir and the FOCUS views in main, over
// the split view SplitTable that db already has: the bill module's own
// kubecost_bill_split_daily (billcheck.CreateViews), or CreateViews' table.
func CreateOverSplit(db *sql.DB, moduleDir, exportDir string) (map[string]View, error) {
	return CreateOverSplitFrom(db, moduleDir, fmt.Sprintf("SELECT * FROM read_parquet('%s', hive_partitioning = true, hive_types_autocast = false)",
		filepath.ToSlash(filepath.Join(exportDir, "**", "*.parquet"))))
}

// CreateOverSplitFrom is CreateOverSplit with focusexport.focus the query
// export: a FOCUS export's files, or the CUR 2.0 origin charges
// (gen.FocusOriginCURSQL).
func CreateOverSplitFrom(db *sql.DB, moduleDir, export string) (map[string]View, error) {
	stmts := []string{
		"SET TimeZone = 'UTC'",
		"CREATE SCHEMA focusexport",
		fmt.Sprintf("CREATE VIEW %s AS %s", ExportTable, export),
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return nil, fmt.Errorf("focuscheck: %w\n%s", err, s)
		}
	}
	views, err := Render(moduleDir, "main", "focusexport", "focus")
	if err != nil {
		return nil, err
	}
	for _, kind := range Kinds {
		s := fmt.Sprintf("CREATE VIEW main.%q AS\n%s", views[kind].Name, views[kind].SQL)
		if _, err := db.Exec(s); err != nil {
			return nil, fmt.Errorf("focuscheck: %w\n%s", err, s)
		}
	}
	return views, nil
}

// CreateOverCUR creates, over the split view SplitTable that db already
// has, the FOCUS views as the bill-focus module renders them with origin =
// cur: the origin view over the CUR 2.0 table curDatabase.curTable, then
// the two FOCUS views reading it.
func CreateOverCUR(db *sql.DB, moduleDir, curDatabase, curTable string) (map[string]View, error) {
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		return nil, fmt.Errorf("focuscheck: %w", err)
	}
	views, err := RenderVars(moduleDir, map[string]string{
		"database_name": "main", "origin": "cur", "cur_database_name": curDatabase,
		"cur_table_name": curTable, "cur_bucket_name": "cur-bucket",
	})
	if err != nil {
		return nil, err
	}
	for _, kind := range append([]string{gen.FocusOriginCURView}, Kinds...) {
		s := fmt.Sprintf("CREATE VIEW main.%q AS\n%s", views[kind].Name, views[kind].SQL)
		if _, err := db.Exec(s); err != nil {
			return nil, fmt.Errorf("focuscheck: %w\n%s", err, s)
		}
	}
	// The checks read the origin charges as ExportTable.
	for _, s := range []string{"CREATE SCHEMA focusexport",
		fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM main.%q", ExportTable, views[gen.FocusOriginCURView].Name)} {
		if _, err := db.Exec(s); err != nil {
			return nil, fmt.Errorf("focuscheck: %w\n%s", err, s)
		}
	}
	return views, nil
}
