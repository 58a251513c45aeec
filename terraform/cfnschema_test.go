package terraform_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/zclconf/go-cty/cty"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/tfeval"
)

// cfnSchemaDir holds the CloudFormation registry's JSON Schemas of the
// QuickSight resources (draft-07), in the shared folder beside the clone.
const cfnSchemaDir = "../../shared/schemas/cloudformation"

// cfnSchema compiles the registry schema of one resource type. Without the
// schemas the test is skipped, except in CI, which has them.
func cfnSchema(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(cfnSchemaDir, file)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: CI must validate against the CloudFormation schemas", path)
		}
		t.Skipf("%s is missing", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.UseRegexpEngine(ecmaRegexp)
	url := "file:///" + file
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// ecmaRegexp compiles a schema pattern with Go's regexp after turning the
// ECMA-262 \uXXXX escapes the registry schemas use into Go's \x{XXXX}.
func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	return regexp.Compile(regexp.MustCompile(`\\u([0-9A-Fa-f]{4})`).ReplaceAllString(s, `\x{$1}`))
}

func validateCFN(t *testing.T, s *jsonschema.Schema, what string, props any) {
	t.Helper()
	b, err := json.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s does not follow the CloudFormation schema:\n%v", what, err)
	}
}

// quicksightBillScope evaluates the quicksight module with the bill
// module's namespace_daily view.
func quicksightBillScope(t *testing.T, extra map[string]any) *tfeval.Scope {
	t.Helper()
	p := pipelineScope(t, map[string]any{"labels": []string{"app", "team"}})
	b := billScope(t, nil)
	in := map[string]any{
		"principal_arns":        []string{"arn:aws:quicksight:us-east-1:" + pipelineAccount + ":group/default/cost-admins"},
		"athena_workgroup_name": "kubecost-s3-exporter",
		"database_name":         "kubecost_db",
		"view_name":             "kubecost_view",
		"view_columns":          viewColumnsOutput(t, p),
		"create_analysis":       true,
		"bill_view": cty.ObjectVal(map[string]cty.Value{
			"database_name": cty.StringVal("kubecost_db"),
			"view_name":     output(t, b, "namespace_daily_view_name"),
			"columns":       output(t, b, "view_columns").GetAttr("namespace_daily"),
		}),
	}
	for k, v := range extra {
		in[k] = v
	}
	dsARN := "arn:aws:quicksight:eu-west-1:" + pipelineAccount + ":dataset/"
	s, err := load(t, "modules/quicksight").Evaluate(tfeval.Inputs{
		Vars: vars(t, in),
		Refs: map[string]cty.Value{
			"data.aws_caller_identity.current":  obj("account_id", pipelineAccount),
			"aws_quicksight_data_source.athena": obj("arn", "arn:aws:quicksight:eu-west-1:"+pipelineAccount+":datasource/kubecost-athena"),
			"aws_quicksight_data_set.this": cty.ObjectVal(map[string]cty.Value{
				"kubecost": obj("arn", dsARN+"kubecost_view", "data_set_id", "kubecost_view"),
				"bill":     obj("arn", dsARN+"kubecost-bill-vs-kubecost", "data_set_id", "kubecost-bill-vs-kubecost"),
			}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// datasetProperties is what CloudFormation's AWS::QuickSight::DataSet
// would receive for an aws_quicksight_data_set block: the provider maps
// each block to the API's field of the same name in PascalCase.
func datasetProperties(t *testing.T, ds tfeval.Instance) map[string]any {
	t.Helper()
	ptm := one(t, ds, "physical_table_map")
	rel := one(t, ptm, "relational_table")
	var cols []map[string]any
	for _, c := range blocks(t, rel, "input_columns") {
		cols = append(cols, map[string]any{"Name": str(t, attr(t, c, "name")), "Type": str(t, attr(t, c, "type"))})
	}
	ltm := one(t, ds, "logical_table_map")
	var perms []map[string]any
	for _, p := range blocks(t, ds, "permissions") {
		perms = append(perms, map[string]any{"Principal": str(t, attr(t, p, "principal")), "Actions": strs(t, attr(t, p, "actions"))})
	}
	return map[string]any{
		"AwsAccountId": str(t, attr(t, ds, "aws_account_id")),
		"DataSetId":    str(t, attr(t, ds, "data_set_id")),
		"Name":         str(t, attr(t, ds, "name")),
		"ImportMode":   str(t, attr(t, ds, "import_mode")),
		"PhysicalTableMap": map[string]any{str(t, attr(t, ptm, "physical_table_map_id")): map[string]any{
			"RelationalTable": map[string]any{
				"DataSourceArn": str(t, attr(t, rel, "data_source_arn")),
				"Catalog":       str(t, attr(t, rel, "catalog")),
				"Schema":        str(t, attr(t, rel, "schema")),
				"Name":          str(t, attr(t, rel, "name")),
				"InputColumns":  cols,
			},
		}},
		"LogicalTableMap": map[string]any{str(t, attr(t, ltm, "logical_table_map_id")): map[string]any{
			"Alias":  str(t, attr(t, ltm, "alias")),
			"Source": map[string]any{"PhysicalTableId": str(t, attr(t, one(t, ltm, "source"), "physical_table_id"))},
		}},
		"Permissions": perms,
	}
}

// TestQuickSightFollowsCloudFormationSchemas validates what the quicksight
// module renders against the CloudFormation registry schemas: the
// dashboard, analysis and Bill vs Kubecost dashboard templates' resource
// properties as the stacks receive them, and both datasets as
// AWS::QuickSight::DataSet properties.
func TestQuickSightFollowsCloudFormationSchemas(t *testing.T) {
	dashboard := cfnSchema(t, "aws-quicksight-dashboard.json")
	analysis := cfnSchema(t, "aws-quicksight-analysis.json")
	dataset := cfnSchema(t, "aws-quicksight-dataset.json")
	s := quicksightBillScope(t, nil)

	templates, err := s.Local("dashboard_templates")
	if err != nil {
		t.Fatal(err)
	}
	analysisTemplate, err := s.Local("analysis_template")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		local string
		v     cty.Value
		sch   *jsonschema.Schema
	}{
		{"dashboard_templates.kubecost", templates.GetAttr("kubecost"), dashboard},
		{"dashboard_templates.bill", templates.GetAttr("bill"), dashboard},
		{"analysis_template", analysisTemplate, analysis},
	} {
		local, v, sch := tc.local, tc.v, tc.sch
		var tmpl struct {
			Resources map[string]struct {
				Type       string
				Properties map[string]any
			}
		}
		if err := json.Unmarshal([]byte(v.AsString()), &tmpl); err != nil {
			t.Fatalf("%s: %v", local, err)
		}
		if len(tmpl.Resources) != 1 {
			t.Fatalf("%s has %d resources", local, len(tmpl.Resources))
		}
		for name, r := range tmpl.Resources {
			if !strings.HasPrefix(r.Type, "AWS::QuickSight::") {
				t.Errorf("%s.%s is %s", local, name, r.Type)
			}
			validateCFN(t, sch, local+"."+name, r.Properties)
		}
	}
	for _, key := range []string{"kubecost", "bill"} {
		validateCFN(t, dataset, "aws_quicksight_data_set.this."+key, datasetProperties(t, each(t, s, key, "resource", "aws_quicksight_data_set", "this")))
	}

	// The data source, as AWS::QuickSight::DataSource properties.
	src := root(t, s, "resource", "aws_quicksight_data_source", "athena")
	var perms []map[string]any
	for _, p := range blocks(t, src, "permission") {
		perms = append(perms, map[string]any{"Principal": str(t, attr(t, p, "principal")), "Actions": strs(t, attr(t, p, "actions"))})
	}
	validateCFN(t, cfnSchema(t, "aws-quicksight-datasource.json"), "aws_quicksight_data_source.athena", map[string]any{
		"AwsAccountId": str(t, attr(t, src, "aws_account_id")),
		"DataSourceId": str(t, attr(t, src, "data_source_id")),
		"Name":         str(t, attr(t, src, "name")),
		"Type":         str(t, attr(t, src, "type")),
		"DataSourceParameters": map[string]any{"AthenaParameters": map[string]any{
			"WorkGroup": str(t, attr(t, one(t, one(t, src, "parameters"), "athena"), "work_group")),
		}},
		"SslProperties": map[string]any{"DisableSsl": attr(t, one(t, src, "ssl_properties"), "disable_ssl").True()},
		"Permissions":   perms,
	})
}

// TestCloudFormationSchemaCheckFails shows the check can fail: a visual
// with an unknown property, and a dataset column of a type QuickSight
// does not have, are rejected.
func TestCloudFormationSchemaCheckFails(t *testing.T) {
	dashboard := cfnSchema(t, "aws-quicksight-dashboard.json")
	dataset := cfnSchema(t, "aws-quicksight-dataset.json")
	s := quicksightBillScope(t, nil)
	templates, err := s.Local("dashboard_templates")
	if err != nil {
		t.Fatal(err)
	}
	v := templates.GetAttr("bill")
	bad := strings.Replace(v.AsString(), `"VisualId":"bill-daily"`, `"VisualId":"bill-daily","Colour":"red"`, 1)
	if bad == v.AsString() {
		t.Fatal("mutation did not apply")
	}
	var tmpl struct {
		Resources map[string]struct{ Properties any }
	}
	if err := json.Unmarshal([]byte(bad), &tmpl); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tmpl.Resources["Dashboard"].Properties)
	doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if dashboard.Validate(doc) == nil {
		t.Error("a visual with an unknown property passes the dashboard schema")
	}
	props := datasetProperties(t, each(t, s, "bill", "resource", "aws_quicksight_data_set", "this"))
	rel := props["PhysicalTableMap"].(map[string]any)["bill-namespace-daily"].(map[string]any)["RelationalTable"].(map[string]any)
	rel["InputColumns"].([]map[string]any)[0]["Type"] = "DOUBLE"
	b, _ = json.Marshal(props)
	doc, _ = jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if dataset.Validate(doc) == nil {
		t.Error("an input column of type DOUBLE passes the dataset schema")
	}
}
