package quicksight_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/quicksight"
)

// viewColumns are the view's columns without labels: the exporter's
// columns and the partition keys, lowercase, as the pipeline module
// defines them (terraform/ tests check the module against this file).
func viewColumns(t *testing.T, labels ...string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../terraform/modules/pipeline/columns.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Columns       []struct{ Name string } `json:"columns"`
		PartitionKeys []struct{ Name string } `json:"partition_keys"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	cols := map[string]bool{}
	for _, c := range append(d.Columns, d.PartitionKeys...) {
		cols[strings.ToLower(c.Name)] = true
	}
	for _, l := range labels {
		cols[quicksight.LabelPrefix+l] = true
	}
	return cols
}

func render(t *testing.T, labels ...string) map[string]any {
	t.Helper()
	b, err := quicksight.Render(labels)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// walk calls fn for every JSON object in v, with its path.
func walk(v any, path string, fn func(path string, obj map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(path, x)
		for k, c := range x {
			walk(c, path+"."+k, fn)
		}
	case []any:
		for i, c := range x {
			walk(c, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

func list(v any) []any         { l, _ := v.([]any); return l }
func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func str(v any) string         { s, _ := v.(string); return s }

// oneValue returns the only value of a single-key object (QuickSight's
// "union" shape, e.g. {"BarChartVisual": {...}}).
func oneValue(m map[string]any) map[string]any {
	for _, v := range m {
		return obj(v)
	}
	return nil
}

func TestDefinitionHasTheRequiredSheets(t *testing.T) {
	d := render(t)
	want := map[string]string{
		"cost-over-time":              "cost over time by cluster and namespace",
		"top-workloads":               "top workloads",
		"efficiency":                  "CPU and RAM efficiency",
		"cost-by-label":               "cost by label",
		"capacity-and-instance-types": "breakdown by node capacity type and instance type",
	}
	seen := map[string]bool{}
	for _, s := range list(d["Sheets"]) {
		id := str(obj(s)["SheetId"])
		seen[id] = true
		if len(list(obj(s)["Visuals"])) == 0 {
			t.Errorf("sheet %s has no visual", id)
		}
	}
	for id, what := range want {
		if !seen[id] {
			t.Errorf("no sheet %q (%s)", id, what)
		}
	}
}

var (
	fieldRefRE = regexp.MustCompile(`\{([^{}]+)\}`)
	paramRefRE = regexp.MustCompile(`\$\{(\w+)\}`)
)

// TestDefinitionReferencesExist checks that every column, calculated field,
// parameter, filter, visual and field ID that the definition refers to
// exists, for a rendering without labels and one with labels.
func TestDefinitionReferencesExist(t *testing.T) {
	for _, labels := range [][]string{nil, {"app", "app.kubernetes.io/name", "team"}} {
		t.Run(fmt.Sprintf("labels=%v", labels), func(t *testing.T) {
			d := render(t, labels...)
			ident, err := quicksight.DatasetIdentifier()
			if err != nil {
				t.Fatal(err)
			}
			cols := viewColumns(t, labels...)
			calc := map[string]bool{}
			for _, c := range list(d["CalculatedFields"]) {
				if str(obj(c)["DataSetIdentifier"]) != ident {
					t.Errorf("calculated field %v: wrong dataset identifier", c)
				}
				calc[str(obj(c)["Name"])] = true
			}
			params := map[string]bool{}
			for _, p := range list(d["ParameterDeclarations"]) {
				params[str(oneValue(obj(p))["Name"])] = true
			}
			checkExpr := func(where, e string) {
				if strings.Contains(e, "__") {
					t.Errorf("%s: placeholder left in %q", where, e)
				}
				for _, m := range fieldRefRE.FindAllStringSubmatch(paramRefRE.ReplaceAllString(e, ""), -1) {
					if !cols[m[1]] && !calc[m[1]] {
						t.Errorf("%s: expression refers to unknown field {%s}", where, m[1])
					}
				}
				for _, m := range paramRefRE.FindAllStringSubmatch(e, -1) {
					if !params[m[1]] {
						t.Errorf("%s: expression refers to unknown parameter ${%s}", where, m[1])
					}
				}
			}
			filters := map[string]bool{}
			walk(d["FilterGroups"], "FilterGroups", func(_ string, o map[string]any) {
				if id, ok := o["FilterId"]; ok {
					filters[str(id)] = true
				}
			})
			sheets := map[string]bool{}
			for _, s := range list(d["Sheets"]) {
				sheets[str(obj(s)["SheetId"])] = true
			}
			walk(d, "Definition", func(path string, o map[string]any) {
				if c, ok := o["ColumnName"]; ok {
					if str(o["DataSetIdentifier"]) != ident {
						t.Errorf("%s: dataset identifier %v, want %s", path, o["DataSetIdentifier"], ident)
					}
					if !cols[str(c)] && !calc[str(c)] {
						t.Errorf("%s: unknown column or calculated field %q", path, c)
					}
				}
				if e, ok := o["Expression"]; ok {
					checkExpr(path, str(e))
				}
				if id, ok := o["SourceFilterId"]; ok && !filters[str(id)] {
					t.Errorf("%s: unknown filter %v", path, id)
				}
				if p, ok := o["SourceParameterName"]; ok && !params[str(p)] {
					t.Errorf("%s: unknown parameter %v", path, p)
				}
				if id, ok := o["SheetId"]; ok && strings.HasPrefix(path, "Definition.FilterGroups") && !sheets[str(id)] {
					t.Errorf("%s: unknown sheet %v", path, id)
				}
			})
		})
	}
}

// TestDefinitionIDsAndLayout checks that IDs are unique, that every visual
// is laid out exactly once on a 36-column grid, and that sorts refer to a
// field of their own visual.
func TestDefinitionIDsAndLayout(t *testing.T) {
	checkIDsAndLayout(t, render(t))
	checkIDsAndLayout(t, billDefinition(t))
}

func checkIDsAndLayout(t *testing.T, d map[string]any) {
	t.Helper()
	ids := map[string]string{}
	unique := func(kind, id, where string) {
		if id == "" {
			t.Errorf("%s: empty %s", where, kind)
		}
		if prev, dup := ids[kind+":"+id]; dup {
			t.Errorf("%s %q used by %s and %s", kind, id, prev, where)
		}
		ids[kind+":"+id] = where
	}
	for si, s := range list(d["Sheets"]) {
		sheet := obj(s)
		sid := str(sheet["SheetId"])
		unique("SheetId", sid, fmt.Sprint("Sheets[", si, "]"))
		visuals := map[string]bool{}
		for _, v := range list(sheet["Visuals"]) {
			vis := oneValue(obj(v))
			vid := str(vis["VisualId"])
			unique("VisualId", vid, sid)
			visuals[vid] = true
			if str(obj(obj(vis["Title"])["FormatText"])["PlainText"]) == "" {
				t.Errorf("visual %s has no title", vid)
			}
			fields := map[string]bool{}
			walk(vis["ChartConfiguration"], vid, func(path string, o map[string]any) {
				if f, ok := o["FieldId"]; ok && !strings.Contains(path, "Sort") {
					unique("FieldId", str(f), path)
					fields[str(f)] = true
				}
			})
			walk(vis["ChartConfiguration"], vid, func(path string, o map[string]any) {
				if fs, ok := o["FieldSort"]; ok && !fields[str(obj(fs)["FieldId"])] {
					t.Errorf("%s: sorts by %v, not a field of the visual", path, obj(fs)["FieldId"])
				}
			})
		}
		laid := map[string]int{}
		for _, l := range list(sheet["Layouts"]) {
			grid := obj(obj(obj(l)["Configuration"])["GridLayout"])
			for _, e := range list(grid["Elements"]) {
				el := obj(e)
				laid[str(el["ElementId"])]++
				col, span := el["ColumnIndex"].(float64), el["ColumnSpan"].(float64)
				if col < 0 || span < 1 || col+span > 36 {
					t.Errorf("sheet %s: element %v spans columns %v-%v of 36", sid, el["ElementId"], col, col+span)
				}
				if str(el["ElementType"]) == "VISUAL" && !visuals[str(el["ElementId"])] {
					t.Errorf("sheet %s: layout element %v is not a visual of the sheet", sid, el["ElementId"])
				}
			}
		}
		for vid := range visuals {
			if laid[vid] != 1 {
				t.Errorf("sheet %s: visual %s is laid out %d times, want once", sid, vid, laid[vid])
			}
		}
		for _, c := range append(list(sheet["FilterControls"]), list(sheet["ParameterControls"])...) {
			ctl := oneValue(obj(c))
			id := str(ctl["FilterControlId"]) + str(ctl["ParameterControlId"])
			unique("ControlId", id, sid)
		}
	}
	for _, g := range list(d["FilterGroups"]) {
		unique("FilterGroupId", str(obj(g)["FilterGroupId"]), "FilterGroups")
	}
}

func TestRender(t *testing.T) {
	t.Run("no labels", func(t *testing.T) {
		d := render(t)
		if v := labelControlValues(d); fmt.Sprint(v) != "[(none)]" {
			t.Errorf("label control values = %v, want [(none)]", v)
		}
		if e := calculatedField(d, "label_value"); e != "toString('')" {
			t.Errorf("label_value = %q without labels", e)
		}
	})
	t.Run("labels", func(t *testing.T) {
		d := render(t, "app", "team")
		expr := calculatedField(d, "label_value")
		want := "ifelse(${LabelKey} = 'app', {properties.labels.app}, ${LabelKey} = 'team', {properties.labels.team}, '')"
		if expr != want {
			t.Errorf("label_value = %q, want %q", expr, want)
		}
		if values := labelControlValues(d); fmt.Sprint(values) != "[app team]" {
			t.Errorf("label control values = %v, want [app team]", values)
		}
		var def []any
		for _, p := range list(d["ParameterDeclarations"]) {
			if decl := oneValue(obj(p)); str(decl["Name"]) == "LabelKey" {
				def = list(obj(decl["DefaultValues"])["StaticValues"])
			}
		}
		if fmt.Sprint(def) != "[app]" {
			t.Errorf("LabelKey default = %v, want [app]", def)
		}
	})
	t.Run("each placeholder once or more", func(t *testing.T) {
		for _, p := range []string{quicksight.LabelValueExpression, quicksight.LabelKeys, quicksight.DefaultLabelKey} {
			if !strings.Contains(string(quicksight.DefinitionJSON), p) {
				t.Errorf("definition lacks placeholder %s", p)
			}
		}
	})
}

// TestDefinitionIsCompact keeps the definition within CloudFormation's
// 51,200-byte template body once minified, with room for the template
// around it and for 20 labels.
func TestDefinitionIsCompact(t *testing.T) {
	labels := make([]string, 20)
	for i := range labels {
		labels[i] = fmt.Sprintf("example.com/label-number-%02d", i)
	}
	b, err := quicksight.Render(labels)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	compact, _ := json.Marshal(v)
	if n := len(compact); n > 51200-4096 {
		t.Errorf("definition is %d bytes minified with 20 labels; CloudFormation allows 51,200 for the whole template", n)
	}
}

func calculatedField(d map[string]any, name string) string {
	for _, c := range list(d["CalculatedFields"]) {
		if str(obj(c)["Name"]) == name {
			return str(obj(c)["Expression"])
		}
	}
	return ""
}

func labelControlValues(d map[string]any) []any {
	var values []any
	walk(d, "", func(_ string, o map[string]any) {
		if str(o["SourceParameterName"]) == "LabelKey" {
			values = list(obj(o["SelectableValues"])["Values"])
		}
	})
	return values
}

// billDefinition is bill-definition.json, parsed.
func billDefinition(t *testing.T) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(quicksight.BillDefinitionJSON, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// billViewColumns are the columns of the bill module's namespace_daily
// view that QuickSight can read (terraform/ tests check the module and
// its dataset against views.json).
func billViewColumns(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../terraform/modules/bill/views.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Views []struct {
			Name    string
			Columns []struct{ Name, QuickSight string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	cols := map[string]bool{}
	for _, v := range d.Views {
		if v.Name == "namespace_daily" {
			for _, c := range v.Columns {
				cols[c.Name] = c.QuickSight != ""
			}
		}
	}
	if len(cols) == 0 {
		t.Fatal("views.json has no namespace_daily view")
	}
	return cols
}

// TestBillDefinition checks the Bill vs Kubecost dashboard: one sheet of
// that name, every column it refers to a column of the namespace_daily
// view of its one dataset, every filter control's filter defined, and the
// visuals the issue asks for (the two sides, the difference, what only
// Kubecost counts, idle next to unused).
func TestBillDefinition(t *testing.T) {
	d := billDefinition(t)
	ident, err := quicksight.BillDatasetIdentifier()
	if err != nil {
		t.Fatal(err)
	}
	sheets := list(d["Sheets"])
	if len(sheets) != 1 || str(obj(sheets[0])["Name"]) != "Bill vs Kubecost" {
		t.Fatalf("want one sheet named Bill vs Kubecost, got %d", len(sheets))
	}
	cols := billViewColumns(t)
	used := map[string]bool{}
	filters := map[string]bool{}
	walk(d["FilterGroups"], "FilterGroups", func(_ string, o map[string]any) {
		if id, ok := o["FilterId"]; ok {
			filters[str(id)] = true
		}
	})
	walk(d, "Definition", func(path string, o map[string]any) {
		if c, ok := o["ColumnName"]; ok {
			if str(o["DataSetIdentifier"]) != ident {
				t.Errorf("%s: dataset identifier %v, want %s", path, o["DataSetIdentifier"], ident)
			}
			if !cols[str(c)] {
				t.Errorf("%s: %q is not a QuickSight-readable column of namespace_daily", path, c)
			}
			used[str(c)] = true
		}
		if id, ok := o["SourceFilterId"]; ok && !filters[str(id)] {
			t.Errorf("%s: unknown filter %v", path, id)
		}
	})
	for _, c := range []string{"kubecost_compute_cost", "bill_cost", "bill_net_cost", "split_bill_cost", "pricing_step", "kubecost_only_cost",
		"kubecost_idle_cost", "bill_unused_cost", "present_in", "namespace", "usage_date"} {
		if !used[c] {
			t.Errorf("the sheet does not show %s", c)
		}
	}
	checkBillWaterfalls(t, d)
}

// The steps of the waterfall, in the order they add up (the views'
// columns, docs/bill.md): Kubecost + pricing + discounts + negotiated =
// the split of the bill; that + idle spread + split weights = SCAD.
var (
	toSplitBill = []string{"kubecost_cost", "pricing_step", "discounts_step", "negotiated_step"}
	toSCAD      = []string{"split_bill_cost", "idle_spread_step", "split_weights_step"}
)

// checkBillWaterfalls: the sheet has the two waterfalls, each of its
// steps in order as summed values (QuickSight's total bar is their sum,
// so the last bar is the split of the bill, then SCAD's), under a
// cluster and a days control; and the table shows every step column.
func checkBillWaterfalls(t *testing.T, d map[string]any) {
	t.Helper()
	sheet := obj(list(d["Sheets"])[0])
	got := map[string][]string{}
	for _, v := range list(sheet["Visuals"]) {
		w, ok := obj(v)["WaterfallVisual"].(map[string]any)
		if !ok {
			continue
		}
		wells := obj(obj(obj(w["ChartConfiguration"])["FieldWells"])["WaterfallChartAggregatedFieldWells"])
		if len(list(wells["Categories"])) != 0 {
			t.Errorf("%s: a category would make each value a series, not a step", w["VisualId"])
		}
		for _, m := range list(wells["Values"]) {
			f := obj(obj(m)["NumericalMeasureField"])
			if str(obj(f["AggregationFunction"])["SimpleNumericalAggregation"]) != "SUM" {
				t.Errorf("%s: %v is not summed", w["VisualId"], f["FieldId"])
			}
			got[str(w["VisualId"])] = append(got[str(w["VisualId"])], str(obj(f["Column"])["ColumnName"]))
		}
	}
	for id, want := range map[string][]string{"bill-waterfall": toSplitBill, "bill-waterfall-scad": toSCAD} {
		if !slices.Equal(got[id], want) {
			t.Errorf("waterfall %s: steps %v, want %v", id, got[id], want)
		}
	}
	controls := map[string]bool{}
	walk(sheet["FilterControls"], "FilterControls", func(_ string, o map[string]any) {
		if id, ok := o["SourceFilterId"]; ok {
			controls[str(id)] = true
		}
	})
	filtered := map[string]bool{}
	walk(d["FilterGroups"], "FilterGroups", func(_ string, o map[string]any) {
		if id, ok := o["FilterId"]; ok && controls[str(id)] {
			filtered[str(obj(o["Column"])["ColumnName"])] = true
		}
	})
	if !filtered["cluster_arn"] || !filtered["usage_date"] {
		t.Errorf("the waterfalls are not per cluster and month: controls filter %v", filtered)
	}
	table := map[string]bool{}
	for _, v := range list(sheet["Visuals"]) {
		if tv, ok := obj(v)["TableVisual"].(map[string]any); ok {
			walk(tv, "table", func(_ string, o map[string]any) {
				if c, ok := o["ColumnName"]; ok {
					table[str(c)] = true
				}
			})
		}
	}
	for _, c := range append(append(slices.Clone(toSplitBill), toSCAD...), "scad_cost", "list_priced_cost") {
		if !table[c] {
			t.Errorf("the table does not show %s", c)
		}
	}
}
