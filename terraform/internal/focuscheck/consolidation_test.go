package focuscheck

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// moduleInputs are the required inputs of each module, enough to render
// its Glue tables.
var moduleInputs = map[string]map[string]string{
	"modules/pipeline":   {"bucket_name": "kubecost-archive"},
	"modules/exporter":   {},
	"modules/quicksight": {},
	"modules/bill":       {"database_name": "kubecost_db", "cur_database_name": "cur", "cur_table_name": "cur2", "cur_bucket_name": "cur-bucket"},
	// origin = cur renders every view of bill-focus: focus_origin_cur too.
	"modules/bill-focus":  {"database_name": "kubecost_db", "origin": "cur", "cur_database_name": "cur", "cur_table_name": "cur2", "cur_bucket_name": "cur-bucket"},
	"modules/bill-export": {"bucket_name": "cur-bucket"},
}

// glueTables renders every aws_glue_catalog_table of every module as
// Terraform would create it: its table type and its columns. A table a
// module creates through a call of a shared module (modules/internal/...)
// is rendered with the caller's arguments, as Terraform plans it.
func glueTables(t *testing.T) []GlueTable {
	t.Helper()
	refs := map[string]cty.Value{
		"data.aws_caller_identity.current": obj("account_id", "111122223333"),
		"data.aws_partition.current":       obj("partition", "aws"),
		"data.aws_region.current":          obj("id", "eu-west-1"),
	}
	var out []GlueTable
	for _, dir := range gen.ModuleDirs() {
		if strings.HasPrefix(dir, "modules/internal/") {
			continue // rendered through its callers
		}
		m, err := tfeval.Load(filepath.Join(moduleDir(t), "..", "..", dir))
		if err != nil {
			t.Fatal(err)
		}
		if !createsTables(t, m) {
			continue
		}
		in, ok := moduleInputs[dir]
		if !ok {
			t.Fatalf("%s creates Glue tables and has no inputs here", dir)
		}
		vars := map[string]cty.Value{}
		for k, v := range in {
			vars[k] = cty.StringVal(v)
		}
		s, err := m.Evaluate(tfeval.Inputs{Vars: vars, Refs: refs})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out = append(out, scopeTables(t, dir, s, refs)...)
	}
	return out
}

func obj(k, v string) cty.Value { return cty.ObjectVal(map[string]cty.Value{k: cty.StringVal(v)}) }

// createsTables: m or a module it calls has an aws_glue_catalog_table.
func createsTables(t *testing.T, m *tfeval.Module) bool {
	t.Helper()
	if len(tablesOf(m)) > 0 {
		return true
	}
	for _, call := range m.Of("module") {
		src, ok := call.Body.Attributes["source"]
		if !ok {
			continue
		}
		v, diags := src.Expr.Value(nil)
		if diags.HasErrors() || v.Type() != cty.String {
			continue
		}
		child, err := tfeval.Load(filepath.Join(m.Dir, v.AsString()))
		if err == nil && createsTables(t, child) {
			return true
		}
	}
	return false
}

func tablesOf(m *tfeval.Module) []*tfeval.Block {
	var tables []*tfeval.Block
	for _, b := range m.Of("resource") {
		if b.Labels[0] == "aws_glue_catalog_table" {
			tables = append(tables, b)
		}
	}
	return tables
}

// scopeTables renders the tables of an evaluated module and, through
// tfeval's Call, those of the modules it calls.
func scopeTables(t *testing.T, where string, s *tfeval.Scope, refs map[string]cty.Value) []GlueTable {
	t.Helper()
	var out []GlueTable
	for _, b := range tablesOf(s.M) {
		for _, inst := range instances(t, s, b) {
			out = append(out, glueTable(t, where+"."+b.Name(), inst))
		}
	}
	for _, call := range s.M.Of("module") {
		cs, err := s.Call(call.Labels[0], refs)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		out = append(out, scopeTables(t, where+".module."+call.Labels[0], cs, refs)...)
	}
	return out
}

// instances expands a resource's for_each (each.key, each.value).
func instances(t *testing.T, s *tfeval.Scope, b *tfeval.Block) []tfeval.Instance {
	t.Helper()
	fe, ok := b.Body.Attributes["for_each"]
	if !ok {
		return []tfeval.Instance{s.Root(b)}
	}
	coll, err := s.Eval(fe.Expr)
	if err != nil {
		t.Fatalf("%s for_each: %v", b.Name(), err)
	}
	var out []tfeval.Instance
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		ctx := s.Ctx.NewChild()
		ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})}
		out = append(out, tfeval.Instance{Body: b.Body, Ctx: ctx})
	}
	return out
}

func glueTable(t *testing.T, where string, inst tfeval.Instance) GlueTable {
	t.Helper()
	str := func(i tfeval.Instance, name string) string {
		v, err := i.Attr(name)
		if err != nil || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
			return ""
		}
		return v.AsString()
	}
	g := GlueTable{Name: str(inst, "name"), TableType: str(inst, "table_type")}
	sds, err := inst.Blocks("storage_descriptor")
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, sd := range sds {
		cols, err := sd.Blocks("columns")
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		for _, c := range cols {
			g.Columns = append(g.Columns, str(c, "name"))
		}
	}
	if g.TableType == "" || len(g.Columns) == 0 {
		t.Fatalf("%s: no table type or columns rendered", where)
	}
	g.Name = where + " " + g.Name
	return g
}

// TestConsolidationCountsNothingTwice applies the CID consolidation's rule
// to every Glue table the modules create: none is unioned, so the FOCUS
// dashboard sees AWS's export once. The same rule does pick up the
// export, and would pick up the allocated charges had they been an
// EXTERNAL_TABLE: that is the double count the views avoid.
func TestConsolidationCountsNothingTwice(t *testing.T) {
	tables := glueTables(t)
	types := map[string]int{}
	for _, g := range tables {
		types[g.TableType]++
		if Consolidated(g) {
			t.Errorf("%s (%s) would be unioned into %s next to the AWS FOCUS export", g.Name, g.TableType, ConsolidationView)
		}
	}
	// pipeline: table + view; bill-export: table; bill: 4 views; bill-focus: 3 views.
	if types["EXTERNAL_TABLE"] != 2 || types["VIRTUAL_VIEW"] != 8 {
		t.Errorf("rendered %v, want 2 EXTERNAL_TABLE and 8 VIRTUAL_VIEW", types)
	}
	var export, focus []string
	for _, c := range gen.FocusExportColumns() {
		export = append(export, strings.ToLower(c.Name))
	}
	for _, v := range gen.FocusViews() {
		if v.Name != "focus" {
			continue
		}
		for _, c := range v.Columns {
			focus = append(focus, c.Name)
		}
	}
	if !Consolidated(GlueTable{"focus", "EXTERNAL_TABLE", export}) {
		t.Error("the rule does not union AWS's FOCUS export: it is not the consolidation's rule")
	}
	if !Consolidated(GlueTable{"kubecost_bill_focus", "EXTERNAL_TABLE", focus}) {
		t.Error("allocated charges as an EXTERNAL_TABLE would not be unioned: the double count is not shown")
	}
	if Consolidated(GlueTable{"kubecost_bill_focus", "VIRTUAL_VIEW", focus}) || Consolidated(GlueTable{ConsolidationView, "EXTERNAL_TABLE", export}) {
		t.Error("the rule unions a view or the consolidation itself")
	}
}

// TestConsolidatedTotals sums BilledCost over the union the consolidation
// would build on DuckDB: with what this project creates it is the
// export's; had the allocated charges been a table, it would be more.
func TestConsolidatedTotals(t *testing.T) {
	db, views := open(t, CanonicalSplit(), CanonicalFocus())
	exec(t, db, `CREATE TABLE materialized_focus AS SELECT * FROM main."`+views["focus"].Name+`"`)
	total := func(rels ...string) float64 {
		var parts []string
		for _, r := range rels {
			parts = append(parts, "SELECT BilledCost FROM "+r)
		}
		var v float64
		if err := db.QueryRow("SELECT sum(BilledCost) FROM (" + strings.Join(parts, " UNION ALL ") + ")").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	export := total(ExportTable)
	candidates := []struct {
		rel string
		g   GlueTable
	}{
		{ExportTable, GlueTable{"focus", "EXTERNAL_TABLE", FocusMinimumColumns}},
		{`main."` + views["focus"].Name + `"`, GlueTable{views["focus"].Name, "VIRTUAL_VIEW", FocusMinimumColumns}},
		{`main."` + views["focus_replaced"].Name + `"`, GlueTable{views["focus_replaced"].Name, "VIRTUAL_VIEW", FocusMinimumColumns}},
	}
	var picked []string
	for _, c := range candidates {
		if Consolidated(c.g) {
			picked = append(picked, c.rel)
		}
	}
	if got := total(picked...); got != export {
		t.Errorf("consolidated BilledCost %v, export %v", got, export)
	}
	if got := total(`main."` + views["focus_replaced"].Name + `"`); diff(got, export) > 1e-9 {
		t.Errorf("replaced view BilledCost %v, export %v", got, export)
	}
	twice := total(ExportTable, "materialized_focus")
	if allocated := total("materialized_focus"); allocated <= 0 || diff(twice, export+allocated) > 1e-9 {
		t.Errorf("with the allocated charges as a table: %v, want export %v + allocated %v", twice, export, allocated)
	}
	t.Logf("export %.6f, consolidated %.6f, if the allocated charges were a table %.6f", export, total(picked...), twice)
}

func diff(a, b float64) float64 {
	d := a - b
	if d < 0 {
		d = -d
	}
	if b != 0 {
		if b < 0 {
			b = -b
		}
		return d / b
	}
	return d
}
