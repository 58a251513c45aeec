package terraform_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/quicksight"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

type column struct{ Name, Type string }

func describedColumns(cols []schema.DescribedColumn, typ func(schema.DescribedColumn) string) []column {
	out := make([]column, len(cols))
	for i, c := range cols {
		out[i] = column{strings.ToLower(c.Name), typ(c)}
	}
	return out
}

func glue(c schema.DescribedColumn) string       { return c.Glue }
func presto(c schema.DescribedColumn) string     { return c.Presto }
func quickSight(c schema.DescribedColumn) string { return c.QuickSight }

func blockColumns(t *testing.T, insts []tfeval.Instance, typeAttr string) []column {
	t.Helper()
	out := make([]column, len(insts))
	for i, c := range insts {
		out[i] = column{str(t, attr(t, c, "name")), str(t, attr(t, c, typeAttr))}
	}
	return out
}

var labelCases = []struct {
	name                string
	labels, annotations []string
}{
	{"no labels", nil, nil},
	{"labels and annotations", []string{"app", "app.kubernetes.io/name", "Team"}, []string{"owner", "example.com/cost-center"}},
}

// TestGlueTableColumnsEqualSchema evaluates the Glue table of the pipeline
// module and compares its columns and partition keys with the exporter's
// contract for the same LABELS and ANNOTATIONS.
func TestGlueTableColumnsEqualSchema(t *testing.T) {
	for _, tc := range labelCases {
		t.Run(tc.name, func(t *testing.T) {
			s := pipelineScope(t, map[string]any{"labels": tc.labels, "annotations": tc.annotations, "s3_prefix": "team-a/costs/"})
			want := schema.Describe(tc.labels, tc.annotations)
			table := parquetTable(t, s)
			sd := one(t, table, "storage_descriptor")

			got := blockColumns(t, blocks(t, sd, "columns"), "type")
			if w := describedColumns(want.Columns, glue); !slices.Equal(got, w) {
				t.Errorf("table columns differ from the schema:\n got %v\nwant %v", got, w)
			}
			gotKeys := blockColumns(t, blocks(t, table, "partition_keys"), "type")
			if w := describedColumns(want.PartitionKeys, glue); !slices.Equal(gotKeys, w) {
				t.Errorf("partition keys = %v, want %v", gotKeys, w)
			}

			for name, w := range map[string]string{
				"location":      "s3://" + testBucket + "/team-a/costs/",
				"input_format":  "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
				"output_format": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
			} {
				if g := str(t, attr(t, sd, name)); g != w {
					t.Errorf("storage_descriptor.%s = %q, want %q", name, g, w)
				}
			}
			serde := one(t, sd, "ser_de_info")
			if g := str(t, attr(t, serde, "serialization_library")); g != "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe" {
				t.Errorf("serde = %q", g)
			}
			if g := str(t, attr(t, table, "table_type")); g != "EXTERNAL_TABLE" {
				t.Errorf("table_type = %q", g)
			}
		})
	}
}

// TestViewColumnsAndSQL checks the Athena view: its Glue columns are the
// table's columns then the partition keys, its Presto definition has the
// same columns with Presto types, and its SQL selects exactly those columns
// from the table and filters on the partition keys.
func TestViewColumnsAndSQL(t *testing.T) {
	for _, tc := range labelCases {
		t.Run(tc.name, func(t *testing.T) {
			s := pipelineScope(t, map[string]any{"labels": tc.labels, "annotations": tc.annotations, "view_retention_months": 3})
			want := schema.Describe(tc.labels, tc.annotations)
			all := append(slices.Clone(want.Columns), want.PartitionKeys...)

			view := root(t, s, "resource", "aws_glue_catalog_table", "view")
			if g := str(t, attr(t, view, "table_type")); g != "VIRTUAL_VIEW" {
				t.Errorf("view table_type = %q", g)
			}
			got := blockColumns(t, blocks(t, one(t, view, "storage_descriptor"), "columns"), "type")
			if w := describedColumns(all, glue); !slices.Equal(got, w) {
				t.Errorf("view columns:\n got %v\nwant %v", got, w)
			}

			text := str(t, attr(t, view, "view_original_text"))
			m := regexp.MustCompile(`^/\* Presto View: ([A-Za-z0-9+/=]+) \*/$`).FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("view_original_text is not a Presto view: %.80q", text)
			}
			raw, err := base64.StdEncoding.DecodeString(m[1])
			if err != nil {
				t.Fatal(err)
			}
			var pv struct {
				OriginalSQL string   `json:"originalSql"`
				Catalog     string   `json:"catalog"`
				Schema      string   `json:"schema"`
				Columns     []column `json:"columns"`
			}
			if err := json.Unmarshal(raw, &pv); err != nil {
				t.Fatal(err)
			}
			if w := describedColumns(all, presto); !slices.Equal(pv.Columns, w) {
				t.Errorf("Presto view columns:\n got %v\nwant %v", pv.Columns, w)
			}
			if pv.Catalog != "awsdatacatalog" || pv.Schema != "kubecost_db" {
				t.Errorf("Presto view catalog/schema = %q/%q", pv.Catalog, pv.Schema)
			}
			sel, from, where := splitSQL(t, pv.OriginalSQL)
			var names []string
			for _, c := range all {
				names = append(names, strings.ToLower(c.Name))
			}
			if !slices.Equal(sel, names) {
				t.Errorf("view selects:\n %v\nwant\n %v", sel, names)
			}
			if from != `"kubecost_db"."kubecost_table"` {
				t.Errorf("view reads %s", from)
			}
			if !strings.Contains(where, `date_add('month', -3, current_timestamp)`) || !strings.Contains(where, `"year"`) || !strings.Contains(where, `"month"`) {
				t.Errorf("view filter does not keep 3 months on the partition keys: %s", where)
			}
			if out := str(t, output(t, s, "view_sql")); out != pv.OriginalSQL {
				t.Errorf("view_sql output differs from the view's SQL")
			}
		})
	}
}

// splitSQL returns the selected column names, the FROM relation and the
// WHERE clause of the view's SQL.
func splitSQL(t *testing.T, sql string) (sel []string, from, where string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)^SELECT\n(.*?)\nFROM (\S+)\nWHERE (.*)$`).FindStringSubmatch(sql)
	if m == nil {
		t.Fatalf("unexpected view SQL:\n%s", sql)
	}
	for _, l := range strings.Split(m[1], "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), ","))
		if !strings.HasPrefix(l, `"`) || !strings.HasSuffix(l, `"`) {
			t.Fatalf("select item %q is not a quoted column", l)
		}
		sel = append(sel, l[1:len(l)-1])
	}
	return sel, m[2], m[3]
}

// TestPartitionProjectionMatchesKeyLayout checks that, with partition
// projection, the storage location template yields the exporter's month
// prefix for a sample cluster.
func TestPartitionProjectionMatchesKeyLayout(t *testing.T) {
	s := pipelineScope(t, map[string]any{
		"s3_prefix": "costs/",
		"partition_projection": map[string]any{
			"enabled":     true,
			"account_ids": []string{pipelineAccount, otherAccount},
			"regions":     []string{"eu-west-1", "us-east-1"},
		},
	})
	params := attr(t, parquetTable(t, s), "parameters").AsValueMap()
	tmpl := params["storage.location.template"].AsString()
	l := exporter.Layout{Prefix: "costs/", Account: otherAccount, Region: "us-east-1", Cluster: "prod"}
	day := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	loc := strings.NewReplacer("${account_id}", l.Account, "${region}", l.Region, "${year}", "2026", "${month}", "03").Replace(tmpl)
	if want := "s3://" + testBucket + "/" + l.MonthPrefix(day); loc != want {
		t.Errorf("projected location = %q, want %q", loc, want)
	}
	for k, w := range map[string]string{
		"projection.enabled":           "true",
		"projection.account_id.values": pipelineAccount + "," + otherAccount,
		"projection.region.values":     "eu-west-1,us-east-1",
		"projection.month.digits":      "2",
	} {
		if g := params[k].AsString(); g != w {
			t.Errorf("%s = %q, want %q", k, g, w)
		}
	}
}

// viewColumnsOutput evaluates the pipeline's view_columns output.
func viewColumnsOutput(t *testing.T, s *tfeval.Scope) cty.Value {
	t.Helper()
	v := output(t, s, "view_columns")
	if !v.IsWhollyKnown() {
		t.Fatal("view_columns is not known")
	}
	return v
}

func quicksightScope(t *testing.T, viewColumns cty.Value, extra map[string]any) *tfeval.Scope {
	t.Helper()
	in := map[string]any{
		"principal_arns":        []string{"arn:aws:quicksight:us-east-1:" + pipelineAccount + ":group/default/cost-admins"},
		"athena_workgroup_name": "kubecost-s3-exporter",
		"database_name":         "kubecost_db",
		"view_name":             "kubecost_view",
		"view_columns":          viewColumns,
	}
	for k, v := range extra {
		in[k] = v
	}
	s, err := load(t, "modules/quicksight").Evaluate(tfeval.Inputs{
		Vars: vars(t, in),
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.current": obj("account_id", pipelineAccount),
			"aws_quicksight_data_set.this": cty.ObjectVal(map[string]cty.Value{
				"kubecost": obj("arn", "arn:aws:quicksight:eu-west-1:"+pipelineAccount+":dataset/kubecost_view", "data_set_id", "kubecost_view"),
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestQuickSightDatasetColumnsEqualView feeds the pipeline's view_columns
// output to the quicksight module, as the examples do, and compares the
// dataset's input columns with the view's Glue columns and the contract's
// QuickSight types.
func TestQuickSightDatasetColumnsEqualView(t *testing.T) {
	for _, tc := range labelCases {
		t.Run(tc.name, func(t *testing.T) {
			p := pipelineScope(t, map[string]any{"labels": tc.labels, "annotations": tc.annotations})
			q := quicksightScope(t, viewColumnsOutput(t, p), nil)

			ptm := one(t, each(t, q, "kubecost", "resource", "aws_quicksight_data_set", "this"), "physical_table_map")
			rel := one(t, ptm, "relational_table")
			got := blockColumns(t, blocks(t, rel, "input_columns"), "type")

			view := root(t, p, "resource", "aws_glue_catalog_table", "view")
			viewCols := blockColumns(t, blocks(t, one(t, view, "storage_descriptor"), "columns"), "type")
			var gotNames, viewNames []string
			for _, c := range got {
				gotNames = append(gotNames, c.Name)
			}
			for _, c := range viewCols {
				viewNames = append(viewNames, c.Name)
			}
			want := schema.Describe(tc.labels, tc.annotations)
			var readable []schema.DescribedColumn // what QuickSight can read
			var wantNames []string
			for i, c := range append(slices.Clone(want.Columns), want.PartitionKeys...) {
				if c.QuickSight != "" {
					readable = append(readable, c)
					wantNames = append(wantNames, viewNames[i])
				}
			}
			if len(readable) == len(viewNames) {
				t.Errorf("every view column is in the dataset: the map and struct columns must be left out")
			}
			if !slices.Equal(gotNames, wantNames) {
				t.Errorf("dataset columns differ from the view's readable ones:\n got %v\nwant %v", gotNames, wantNames)
			}
			if w := describedColumns(readable, quickSight); !slices.Equal(got, w) {
				t.Errorf("dataset column types:\n got %v\nwant %v", got, w)
			}
			if g := str(t, attr(t, rel, "name")); g != "kubecost_view" {
				t.Errorf("dataset reads %q", g)
			}
			if g := str(t, attr(t, rel, "schema")); g != "kubecost_db" {
				t.Errorf("dataset schema %q", g)
			}
		})
	}
}

// TestQuickSightDefinitionMatchesGoRender checks that the module renders
// the dashboard definition exactly as quicksight.Render does, and that the
// CloudFormation template stays within the template body limit.
func TestQuickSightDefinitionMatchesGoRender(t *testing.T) {
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("example.com/label-number-%02d", i)
	}
	for _, labels := range [][]string{nil, {"app", "app.kubernetes.io/name", "team"}, many} {
		t.Run(fmt.Sprint(len(labels), " labels"), func(t *testing.T) {
			p := pipelineScope(t, map[string]any{"labels": labels})
			q := quicksightScope(t, viewColumnsOutput(t, p), map[string]any{"create_analysis": true})
			got, err := q.Local("definition_text")
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, l := range labels {
				keys = append(keys, strings.ToLower(l))
			}
			want, err := quicksight.Render(keys)
			if err != nil {
				t.Fatal(err)
			}
			if got.AsString() != string(want) {
				t.Errorf("Terraform's rendering differs from quicksight.Render:\n%s", firstDiff(got.AsString(), string(want)))
			}
			if k := strs(t, output(t, q, "label_keys")); !slices.Equal(k, keys) {
				t.Errorf("label_keys = %v, want %v", k, keys)
			}
			templates, err := q.Local("dashboard_templates")
			if err != nil {
				t.Fatal(err)
			}
			analysis, err := q.Local("analysis_template")
			if err != nil {
				t.Fatal(err)
			}
			for name, tmpl := range map[string]cty.Value{"dashboard_templates.kubecost": templates.GetAttr("kubecost"), "analysis_template": analysis} {
				if n := len(tmpl.AsString()); n > 51200 {
					t.Errorf("%s is %d bytes; CloudFormation's template body limit is 51,200", name, n)
				}
				var doc map[string]any
				if err := json.Unmarshal([]byte(tmpl.AsString()), &doc); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		})
	}
}
