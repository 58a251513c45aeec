package terraform_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/quicksight"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

const (
	cidDir        = "../quicksight/cid/"
	cidResources  = cidDir + "kubecost-s3-exporter.yaml"
	cidDefinition = cidDir + "kubecost-s3-exporter-definition.yaml"
)

const cidHeader = `# cid-cmd resources for the kubecost-s3-exporter dashboard, for users of the
# Cloud Intelligence Dashboards (CID) framework:
#
#   cid-cmd deploy --resources quicksight/cid/kubecost-s3-exporter.yaml \
#     --dashboard-id kubecost-s3-exporter --athena-database <database>
#
# It expects the Glue table kubecost_table (the Terraform pipeline module's,
# or the CCA one) in that database, and creates the view kubecost_view,
# the dataset and the dashboard. Labels are not known here: the view and
# dataset hold the exporter's base columns, and the Cost by label sheet
# stays empty; use the Terraform modules for label columns.
#
# Generated from terraform/modules/pipeline (columns.json and the view
# template) and quicksight/dashboard-definition.json by
# ` + "`go generate ./terraform/...`" + `. Do not edit.
`

// TestGeneratedCIDResources keeps the cid-cmd resources file and its
// definition equal to what the Terraform modules deploy without labels.
func TestGeneratedCIDResources(t *testing.T) {
	d := schema.Describe(nil, nil)
	all := append(slices.Clone(d.Columns), d.PartitionKeys...)
	var names []cty.Value
	var inputColumns []map[string]string
	for _, c := range all {
		n := strings.ToLower(c.Name)
		names = append(names, cty.StringVal(n))
		if c.QuickSight != "" { // maps, lists and structs: Athena only
			inputColumns = append(inputColumns, map[string]string{"Name": n, "Type": c.QuickSight})
		}
	}
	m := load(t, "modules/pipeline")
	tmpl := tfeval.Functions(m.Dir)["templatefile"]
	sql, err := tmpl.Call([]cty.Value{
		cty.StringVal("templates/view.sql.tftpl"),
		cty.ObjectVal(map[string]cty.Value{
			"database": cty.StringVal("${athena_database_name}"),
			"table":    cty.StringVal("kubecost_table"),
			"columns":  cty.ListVal(names),
			"months":   cty.NumberIntVal(6),
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ident, err := quicksight.DatasetIdentifier()
	if err != nil {
		t.Fatal(err)
	}
	resources := map[string]any{
		"dashboards": map[string]any{
			"KUBECOST-S3-EXPORTER": map[string]any{
				"name":        "Kubecost cost allocation",
				"dashboardId": "kubecost-s3-exporter",
				"category":    "Custom",
				"version":     "v" + d.SchemaVersion + ".0.0",
				"file":        "./kubecost-s3-exporter-definition.yaml",
				"dependsOn":   map[string]any{"datasets": []string{ident}},
			},
		},
		"datasets": map[string]any{
			ident: map[string]any{
				"data": map[string]any{
					"DataSetId":  ident,
					"Name":       ident,
					"ImportMode": "SPICE",
					"PhysicalTableMap": map[string]any{
						"kubecost-view": map[string]any{
							"RelationalTable": map[string]any{
								"DataSourceArn": "${athena_datasource_arn}",
								"Catalog":       "AwsDataCatalog",
								"Schema":        "${athena_database_name}",
								"Name":          "kubecost_view",
								"InputColumns":  inputColumns,
							},
						},
					},
					"LogicalTableMap": map[string]any{
						"kubecost-view": map[string]any{
							"Alias":  "kubecost_view",
							"Source": map[string]any{"PhysicalTableId": "kubecost-view"},
						},
					},
				},
				"dependsOn": map[string]any{"views": []string{"kubecost_view"}},
				"schedules": []string{"default"},
			},
		},
		"views": map[string]any{
			"kubecost_view": map[string]any{
				"data": `CREATE OR REPLACE VIEW "${athena_database_name}"."kubecost_view" AS` + "\n" + strings.TrimRight(sql.AsString(), "\n"),
			},
		},
	}
	y, err := yaml.Marshal(resources)
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, cidResources, append([]byte(cidHeader), y...))

	def, err := quicksight.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	dy, err := yaml.JSONToYAML(def)
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, cidDefinition, append([]byte("# QuickSight definition of the kubecost-s3-exporter dashboard, without labels.\n# Generated from quicksight/dashboard-definition.json. Do not edit.\n"), dy...))

	// The view selects every column; the dataset those QuickSight reads.
	sel, _, _ := splitSQL(t, strings.TrimRight(sql.AsString(), "\n"))
	var cols, readable []string
	for _, c := range all {
		cols = append(cols, strings.ToLower(c.Name))
		if c.QuickSight != "" {
			readable = append(readable, strings.ToLower(c.Name))
		}
	}
	var ds []string
	for _, c := range inputColumns {
		ds = append(ds, c["Name"])
	}
	if !slices.Equal(sel, cols) || !slices.Equal(ds, readable) {
		t.Errorf("cid view selects %v, dataset has %v", sel, ds)
	}
	if _, err := json.Marshal(resources); err != nil {
		t.Fatal(err)
	}
}
