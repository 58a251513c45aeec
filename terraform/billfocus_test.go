package terraform_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// billFocusScope evaluates the bill-focus module in pipelineAccount, eu-west-1.
func billFocusScope(t *testing.T, in map[string]any) *tfeval.Scope {
	t.Helper()
	v := map[string]any{
		"database_name":       "kubecost_db",
		"focus_database_name": "cid_data_export",
		"focus_table_name":    "focus",
		"focus_bucket_name":   "cid-" + pipelineAccount + "-data-exports",
		"focus_s3_prefix":     "focus/focus/data/",
	}
	for k, x := range in {
		v[k] = x
		if x == nil {
			delete(v, k) // the variable's default (null)
		}
	}
	s, err := load(t, "modules/bill-focus").Evaluate(tfeval.Inputs{
		Vars: vars(t, v),
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.current": obj("account_id", pipelineAccount),
			"data.aws_partition.current":       obj("partition", "aws"),
			"data.aws_region.current":          obj("id", "eu-west-1"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBillFocusViewsFollowTheGenerator checks the FOCUS views: the
// generator's names, columns and SQL with the module's variables, the
// split view by the prefix, and Presto view text that decodes to them.
func TestBillFocusViewsFollowTheGenerator(t *testing.T) {
	s := billFocusScope(t, map[string]any{"view_name_prefix": "bill"})
	got, err := s.Local("views")
	if err != nil {
		t.Fatal(err)
	}
	presto, err := s.Local("presto_views")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range gen.FocusViews() {
		if v.Name == gen.FocusOriginCURView {
			if got.Type().HasAttribute(v.Name) {
				t.Errorf("origin focus_export renders %s", v.Name)
			}
			continue
		}
		m := got.GetAttr(v.Name)
		if name := m.GetAttr("name").AsString(); name != "bill_"+v.Name {
			t.Errorf("view %s is named %s", v.Name, name)
		}
		sql := m.GetAttr("sql").AsString()
		if !strings.Contains(sql, `"kubecost_db"."bill_split_daily"`) || !strings.Contains(sql, `"cid_data_export"."focus"`) || strings.Contains(sql, "${") {
			t.Errorf("%s SQL does not read the split and the export by the variables:\n%s", v.Name, sql)
		}
		var pv struct {
			OriginalSQL string `json:"originalSql"`
			Columns     []struct{ Name, Type string }
		}
		b, _ := json.Marshal(ctyJSON(t, presto.GetAttr(v.Name)))
		if err := json.Unmarshal(b, &pv); err != nil {
			t.Fatal(err)
		}
		if pv.OriginalSQL != sql || len(pv.Columns) != len(v.Columns) {
			t.Errorf("%s: presto view has %d columns, generator %d", v.Name, len(pv.Columns), len(v.Columns))
		}
	}
	if out := output(t, s, "allocated_method_id").AsString(); out != gen.FocusMethodID {
		t.Errorf("allocated_method_id = %s", out)
	}
	r := root(t, s, "resource", "aws_glue_catalog_table", "view")
	if tt := str(t, attr(t, r, "table_type")); tt != "VIRTUAL_VIEW" {
		t.Errorf("table_type %s: the CID consolidation unions EXTERNAL_TABLEs", tt)
	}
}

// ctyJSON turns a cty object into plain Go values.
func ctyJSON(t *testing.T, v cty.Value) any {
	t.Helper()
	switch {
	case v.IsNull():
		return nil
	case v.Type() == cty.String:
		return v.AsString()
	case v.Type().IsObjectType() || v.Type().IsMapType():
		out := map[string]any{}
		for k, x := range v.AsValueMap() {
			out[k] = ctyJSON(t, x)
		}
		return out
	case v.Type().IsTupleType() || v.Type().IsListType():
		var out []any
		for _, x := range v.AsValueSlice() {
			out = append(out, ctyJSON(t, x))
		}
		return out
	}
	return v.GoString()
}

// TestBillFocusReaderPolicy checks the FOCUS reader's IAM: list and read
// only under the export's prefix, never write its bucket, read the FOCUS
// table and the views' database in the catalog.
func TestBillFocusReaderPolicy(t *testing.T) {
	const bucket = "cid-" + pipelineAccount + "-data-exports"
	s := billFocusScope(t, nil)
	stmts := policyStatements(t, s, "reader")
	if !allowed(stmts, "s3:GetObject", "arn:aws:s3:::"+bucket+"/focus/focus/data/BILLING_PERIOD=2026-03/focus-00001.snappy.parquet") {
		t.Error("cannot read the export's files")
	}
	if allowed(stmts, "s3:GetObject", "arn:aws:s3:::"+bucket+"/cur2/other.parquet") {
		t.Error("may read outside the export's prefix")
	}
	for _, st := range stmts {
		for _, a := range st.Actions {
			if strings.HasSuffix(a, "*") || strings.HasPrefix(a, "s3:Put") || strings.HasPrefix(a, "s3:Delete") {
				t.Errorf("%s grants %s", st.Sid, a)
			}
		}
		if slices.Contains(st.Actions, "s3:ListBucket") && len(st.Conditions) != 1 {
			t.Errorf("%s lists without a prefix condition", st.Sid)
		}
	}
	for _, r := range []string{"table/cid_data_export/focus", "table/kubecost_db/kubecost_bill_split_daily", "database/kubecost_db"} {
		arn := "arn:aws:glue:eu-west-1:" + pipelineAccount + ":" + r
		if !allowed(stmts, "glue:GetTable", arn) && !allowed(stmts, "glue:GetDatabase", arn) {
			t.Errorf("cannot read %s", arn)
		}
	}
}

// TestBillFocusOriginCUR checks origin = cur: the origin view reads the CUR
// 2.0 table, the FOCUS views read the origin view in the export's place,
// and the reader may read the CUR bucket's prefix, not the FOCUS one.
func TestBillFocusOriginCUR(t *testing.T) {
	s := billFocusScope(t, map[string]any{
		"origin": "cur", "focus_database_name": nil, "focus_table_name": nil, "focus_bucket_name": nil, "focus_s3_prefix": "",
		"cur_database_name": "cur_db", "cur_table_name": "cur2", "cur_bucket_name": "cur-bucket", "cur_s3_prefix": "cur/data/",
	})
	got, err := s.Local("views")
	if err != nil {
		t.Fatal(err)
	}
	if n := output(t, s, "origin_view_name").AsString(); n != "kubecost_bill_focus_origin_cur" {
		t.Errorf("origin_view_name = %s", n)
	}
	o := got.GetAttr(gen.FocusOriginCURView).GetAttr("sql").AsString()
	if !strings.Contains(o, `FROM "cur_db"."cur2"`) || strings.Contains(o, "${") {
		t.Errorf("origin view does not read the CUR table:\n%s", o)
	}
	for _, k := range []string{"focus", "focus_replaced"} {
		if sql := got.GetAttr(k).GetAttr("sql").AsString(); !strings.Contains(sql, `"kubecost_db"."kubecost_bill_focus_origin_cur"`) {
			t.Errorf("%s does not read the origin view", k)
		}
	}
	stmts := policyStatements(t, s, "reader")
	if !allowed(stmts, "s3:GetObject", "arn:aws:s3:::cur-bucket/cur/data/BILLING_PERIOD=2026-03/part-0.parquet") {
		t.Error("cannot read the CUR export's files")
	}
	if allowed(stmts, "s3:GetObject", "arn:aws:s3:::cur-bucket/other/x.parquet") {
		t.Error("may read outside the CUR export's prefix")
	}
	for _, r := range []string{"table/cur_db/cur2", "table/kubecost_db/kubecost_bill_focus_origin_cur"} {
		if arn := "arn:aws:glue:eu-west-1:" + pipelineAccount + ":" + r; !allowed(stmts, "glue:GetTable", arn) {
			t.Errorf("cannot read %s", arn)
		}
	}
	if allowed(stmts, "glue:GetTable", "arn:aws:glue:eu-west-1:"+pipelineAccount+":table/cid_data_export/focus") {
		t.Error("still grants the FOCUS export's table")
	}
}
