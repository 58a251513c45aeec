package dashboards_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/dashboards"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/quicksight"
)

const file = "kubecost-athena.json"

// TestGenerated: the committed dashboard is what Generate produces
// (`make generate` writes it, with the other generated files).
func TestGenerated(t *testing.T) {
	b, err := dashboards.Generate()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, b) {
		t.Errorf("%s is stale; run make generate", file)
	}
}

type dashboard struct {
	Title, UID string
	Panels     []struct {
		ID         int
		Type       string
		Title      string
		Datasource struct{ Type, UID string }
		Targets    []struct {
			RawSQL         string `json:"rawSQL"`
			Format         *int
			ConnectionArgs struct{ Database string }
		}
	}
	Templating struct {
		List []struct {
			Name  string
			Query any
		}
	}
}

func load(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s does not parse: %v", file, err)
	}
	return d
}

// quoted finds the double-quoted identifiers of a query: columns, aliases
// and the ${database}.${view} source.
var quoted = regexp.MustCompile(`"([^"]+)"`)

// aliases are the output names the queries give their columns.
var alias = regexp.MustCompile(`AS "([^"]+)"`)

// TestColumnsExistInView checks every column the dashboard queries against
// the view the pipeline module creates from the schema, for a set of labels
// standing in for LABELS, with the label variable set to each.
func TestColumnsExistInView(t *testing.T) {
	d := load(t)
	labels := []string{"app", "app.kubernetes.io/name", "Team"}
	view := dashboards.ViewColumns(labels, []string{"owner"})
	var sqls []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			sqls = append(sqls, tg.RawSQL)
		}
	}
	for _, v := range d.Templating.List {
		if m, ok := v.Query.(map[string]any); ok {
			sqls = append(sqls, m["rawSQL"].(string))
		}
	}
	checked := 0
	for _, sql := range sqls {
		names := map[string]bool{}
		for _, m := range alias.FindAllStringSubmatch(sql, -1) {
			names[m[1]] = true
		}
		for _, l := range labels {
			s := strings.ReplaceAll(sql, dashboards.LabelVar, strings.ToLower(l))
			for _, m := range quoted.FindAllStringSubmatch(s, -1) {
				id := m[1]
				if names[id] || id == "${database}" || id == "${view}" {
					continue
				}
				checked++
				if !view[id] {
					t.Errorf("query uses %q, which is not a column of the view:\n%s", id, sql)
				}
			}
		}
		if !strings.Contains(sql, `FROM "${database}"."${view}"`) {
			t.Errorf("query does not read the view:\n%s", sql)
		}
	}
	if checked < 50 {
		t.Errorf("only %d column references checked", checked)
	}
}

// TestPanelsMatchQuickSight: the dashboard has the panels of the QuickSight
// sheets, with the same titles, each an Athena query with a format.
func TestPanelsMatchQuickSight(t *testing.T) {
	d := load(t)
	var qs struct {
		Sheets []struct {
			Name    string
			Visuals []map[string]struct {
				Title struct{ FormatText struct{ PlainText string } }
			}
		}
	}
	if err := json.Unmarshal(quicksight.DefinitionJSON, &qs); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, s := range qs.Sheets {
		want = append(want, "row: "+s.Name)
		for _, v := range s.Visuals {
			for _, x := range v {
				want = append(want, x.Title.FormatText.PlainText)
			}
		}
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			got = append(got, "row: "+p.Title)
			continue
		}
		got = append(got, p.Title)
		if p.Datasource.Type != dashboards.PluginID || len(p.Targets) != 1 || p.Targets[0].Format == nil ||
			p.Targets[0].ConnectionArgs.Database != "${database}" {
			t.Errorf("panel %q is not one Athena query with a format: %+v", p.Title, p)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("panels differ from the QuickSight sheets\n got: %q\nwant: %q", got, want)
	}
}
