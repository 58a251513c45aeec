package terraform_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// billScope evaluates the bill module in pipelineAccount, eu-west-1.
func billScope(t *testing.T, in map[string]any) *tfeval.Scope {
	t.Helper()
	v := map[string]any{
		"database_name":     "kubecost_db",
		"cur_database_name": "cid_data_export",
		"cur_table_name":    "cur2",
		"cur_bucket_name":   "cid-" + pipelineAccount + "-data-exports",
	}
	for k, x := range in {
		v[k] = x
	}
	s, err := load(t, "modules/bill").Evaluate(tfeval.Inputs{
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

// TestBillViewsFollowTheGenerator checks that the bill module's views are
// the generator's: names, Glue and Presto columns, and SQL rendered with
// the module's variables, and that the Presto view text decodes to them.
func TestBillViewsFollowTheGenerator(t *testing.T) {
	s := billScope(t, map[string]any{"view_name_prefix": "bill", "bill_retention_months": 3})
	views, err := gen.BillViews()
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Local("views")
	if err != nil {
		t.Fatal(err)
	}
	presto, err := s.Local("presto_views")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.AsValueMap()); n != len(views) || n != 4 {
		t.Fatalf("module has %d views, generator %d", n, len(views))
	}
	for _, v := range views {
		mv := got.GetAttr(v.Name)
		if name := mv.GetAttr("name").AsString(); name != "bill_"+v.Name {
			t.Errorf("view %s named %q", v.Name, name)
		}
		var cols []column
		for _, c := range mv.GetAttr("columns").AsValueSlice() {
			cols = append(cols, column{c.GetAttr("name").AsString(), c.GetAttr("glue").AsString()})
		}
		var want []column
		for _, c := range v.Columns {
			want = append(want, column{c.Name, c.Glue})
		}
		if !slices.Equal(cols, want) {
			t.Errorf("%s columns:\n got %v\nwant %v", v.Name, cols, want)
		}
		sql := mv.GetAttr("sql").AsString()
		for _, placeholder := range []string{"${", "%{"} {
			if strings.Contains(sql, placeholder) {
				t.Errorf("%s: template directive left in the SQL", v.Name)
			}
		}
		b, _ := json.Marshal(ctyToGo(presto.GetAttr(v.Name)))
		var pv struct {
			OriginalSQL string   `json:"originalSql"`
			Schema      string   `json:"schema"`
			Columns     []column `json:"columns"`
		}
		if err := json.Unmarshal(b, &pv); err != nil {
			t.Fatal(err)
		}
		var wantPresto []column
		for _, c := range v.Columns {
			wantPresto = append(wantPresto, column{c.Name, c.Presto})
		}
		if pv.OriginalSQL != sql || pv.Schema != "kubecost_db" || !slices.Equal(pv.Columns, wantPresto) {
			t.Errorf("%s: Presto view differs: schema %q columns %v", v.Name, pv.Schema, pv.Columns)
		}
	}
	ns := got.GetAttr("namespace_daily").GetAttr("sql").AsString()
	for _, want := range []string{
		`FROM "kubecost_db"."kubecost_view"`,
		`FROM "cid_data_export"."cur2" WHERE "billing_period" >= substr(CAST(date_add('month', -3, current_date) AS varchar), 1, 7)`,
		"ON k.cluster_arn = b.cluster_arn AND k.namespace = b.namespace AND k.usage_date = b.usage_date",
	} {
		if !strings.Contains(ns, want) {
			t.Errorf("namespace_daily lacks %q", want)
		}
	}
	if cd := got.GetAttr("cluster_daily").GetAttr("sql").AsString(); !strings.Contains(cd, `FROM "kubecost_db"."bill_namespace_daily"`) {
		t.Errorf("cluster_daily does not read bill_namespace_daily:\n%s", cd)
	}
	if cm := got.GetAttr("cluster_monthly").GetAttr("sql").AsString(); !strings.Contains(cm, `FROM "kubecost_db"."bill_cluster_daily"`) {
		t.Errorf("cluster_monthly does not read bill_cluster_daily")
	}

	// bill_retention_months = null reads every billing period.
	all := billScope(t, map[string]any{"bill_retention_months": cty.NullVal(cty.Number)})
	v, err := all.Local("views")
	if err != nil {
		t.Fatal(err)
	}
	if sql := v.GetAttr("namespace_daily").GetAttr("sql").AsString(); strings.Contains(sql, "billing_period") {
		t.Errorf("bill_retention_months = null still filters billing periods")
	}
	glue := root(t, s, "resource", "aws_glue_catalog_table", "view")
	if g := str(t, attr(t, glue, "table_type")); g != "VIRTUAL_VIEW" {
		t.Errorf("table_type %q", g)
	}
	if !regexp.MustCompile(`base64encode\(jsonencode\(local\.presto_views\[each\.key\]\)\)`).MatchString(s.M.Source(glue.Body.Attributes["view_original_text"].Expr.Range())) {
		t.Errorf("view_original_text is not the Presto view of local.presto_views")
	}
}

func ctyToGo(v cty.Value) any {
	switch {
	case v.IsNull():
		return nil
	case v.Type() == cty.String:
		return v.AsString()
	case v.Type() == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f
	case v.Type() == cty.Bool:
		return v.True()
	case v.Type().IsObjectType() || v.Type().IsMapType():
		m := map[string]any{}
		for k, e := range v.AsValueMap() {
			m[k] = ctyToGo(e)
		}
		return m
	case v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType():
		var l []any
		for _, e := range v.AsValueSlice() {
			l = append(l, ctyToGo(e))
		}
		return l
	}
	return nil
}
