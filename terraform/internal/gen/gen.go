// Package gen renders every file generated from the exporter's column
// contract, the Terraform code and the dashboard definition. `make
// generate` writes them (terraform/internal/generate); the terraform tests
// only check that the committed files are current.
package gen

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/dashboards"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/quicksight"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// Paths are relative to the terraform directory, where go generate runs.
const (
	ColumnsPath       = "modules/pipeline/columns.json"
	CIDResourcesPath  = "../quicksight/cid/kubecost-s3-exporter.yaml"
	CIDDefinitionPath = "../quicksight/cid/kubecost-s3-exporter-definition.yaml"
	GrafanaPath       = "../dashboards/kubecost-athena.json"
)

// ModuleDirs and ExampleDirs are the Terraform modules and examples.
func ModuleDirs() []string {
	return []string{"modules/pipeline", "modules/exporter", "modules/quicksight", "modules/bill", "modules/bill-focus", "modules/bill-export", "modules/internal/bucket", "modules/internal/parquet-table"}
}

// ExampleDirs are the Terraform examples.
func ExampleDirs() []string { return []string{"examples/single-account", "examples/cross-account"} }

// File is one generated file.
type File struct {
	Path    string // relative to the terraform directory
	Content []byte
}

// Files renders every generated file. Run it in the terraform directory.
func Files() ([]File, error) {
	cols, err := ColumnsJSON()
	if err != nil {
		return nil, err
	}
	cid, err := CID()
	if err != nil {
		return nil, err
	}
	def, err := CIDDefinition()
	if err != nil {
		return nil, err
	}
	grafana, err := dashboards.Generate()
	if err != nil {
		return nil, err
	}
	files := []File{{ColumnsPath, cols}, {CIDResourcesPath, cid.Resources}, {CIDDefinitionPath, def}, {GrafanaPath, grafana}}
	bill, err := BillViewFiles()
	if err != nil {
		return nil, err
	}
	files = append(files, bill...)
	focus, err := FocusViewFiles()
	if err != nil {
		return nil, err
	}
	files = append(files, focus...)
	for _, dir := range append(ModuleDirs(), ExampleDirs()...) {
		b, err := README(dir)
		if err != nil {
			return nil, err
		}
		files = append(files, File{dir + "/README.md", b})
	}
	return files, nil
}

// ColumnsJSON is what `kubecost-s3-exporter schema --format json` prints.
// JSON has no comments, so this file carries no "generated" marker; the
// module README says where it comes from.
func ColumnsJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := schema.Describe(nil, nil).Write(&b, "json"); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

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
# ` + "`make generate`" + `. Do not edit.
`

// CIDFiles is the cid-cmd resources file, with the view and dataset
// columns it was built from.
type CIDFiles struct {
	Resources      []byte
	ViewSQL        string   // the view's SELECT, as the pipeline module renders it
	DatasetColumns []string // the dataset's input columns, in order
	// ViewColumns are every column of the view, in order; the dataset
	// leaves out those QuickSight cannot read (maps, lists, structs).
	ViewColumns []string
}

// CID renders the cid-cmd resources: the view, dataset and dashboard the
// Terraform modules deploy without labels.
func CID() (*CIDFiles, error) {
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
	m, err := tfeval.Load("modules/pipeline")
	if err != nil {
		return nil, err
	}
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
		return nil, err
	}
	ident, err := quicksight.DatasetIdentifier()
	if err != nil {
		return nil, err
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
		return nil, err
	}
	var cols, viewCols []string
	for _, c := range inputColumns {
		cols = append(cols, c["Name"])
	}
	for _, n := range names {
		viewCols = append(viewCols, n.AsString())
	}
	return &CIDFiles{
		Resources:      append([]byte(cidHeader), y...),
		ViewSQL:        strings.TrimRight(sql.AsString(), "\n"),
		DatasetColumns: cols,
		ViewColumns:    viewCols,
	}, nil
}

// CIDDefinition is the dashboard definition for cid-cmd, without labels.
func CIDDefinition() ([]byte, error) {
	def, err := quicksight.Render(nil)
	if err != nil {
		return nil, err
	}
	dy, err := yaml.JSONToYAML(def)
	if err != nil {
		return nil, fmt.Errorf("definition to YAML: %w", err)
	}
	return append([]byte("# QuickSight definition of the kubecost-s3-exporter dashboard, without labels.\n# Generated from quicksight/dashboard-definition.json by `make generate`. Do not edit.\n"), dy...), nil
}
