// Package dashboards generates the Grafana dashboard of kubecost-s3-exporter
// (kubecost-athena.json) for the Amazon Athena data source plugin, over the
// Glue view the Terraform pipeline module creates. Its panels are those of
// the QuickSight sheets. Every column a query names comes from
// exporter/schema, so a renamed or removed column fails generation and the
// tests instead of an empty panel.
//
// `make generate` rewrites the committed JSON (terraform/internal/gen lists
// every generated file); the tests only check it.
package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// PluginID is the Athena data source plugin's type.
const PluginID = "grafana-athena-datasource"

// LabelVar is the dashboard variable holding the label key the "Cost by
// label" panels group by; queries name the column properties.labels.${label}.
const LabelVar = "${label}"

// Formats of the plugin's queries (sqlds: 0 time series, 1 table).
const (
	timeSeries = 0
	table      = 1
)

// ViewColumns returns the view's column names for the given label and
// annotation keys, lowercased as the pipeline module creates them (Athena
// lowercases names), partition keys included.
func ViewColumns(labels, annotations []string) map[string]bool {
	d := schema.Describe(labels, annotations)
	out := map[string]bool{}
	for _, c := range append(d.Columns, d.PartitionKeys...) {
		out[strings.ToLower(c.Name)] = true
	}
	return out
}

// baseColumns are the view's columns without labels; label columns are
// accepted by prefix, since the keys are the installation's.
var baseColumns = ViewColumns(nil, nil)

// q quotes a column of the view; it panics on a column the schema does
// not have, which the generation test turns into a failure.
func q(name string) string {
	name = strings.ToLower(name)
	if !baseColumns[name] && name != schema.LabelPrefix+LabelVar {
		panic(fmt.Sprintf("dashboards: column %q is not in the view", name))
	}
	return `"` + name + `"`
}

type panel struct {
	title, kind string
	format      int
	sql         string
	w, h        int
	unit        string
	options     map[string]any
}

// Generate returns the dashboard JSON.
func Generate() (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	var panels []any
	id, y := 1, 0
	for _, s := range sheets() {
		panels = append(panels, map[string]any{
			"id": id, "type": "row", "title": s.title, "collapsed": false,
			"gridPos": map[string]int{"x": 0, "y": y, "w": 24, "h": 1}, "panels": []any{},
		})
		id++
		y++
		x, rowH := 0, 0
		for _, p := range s.panels {
			if x+p.w > 24 {
				x, y, rowH = 0, y+rowH, 0
			}
			panels = append(panels, p.render(id, x, y))
			id++
			x += p.w
			rowH = max(rowH, p.h)
		}
		y += rowH
	}
	d := map[string]any{
		"title":         "Kubecost cost allocation (Athena)",
		"uid":           "kubecost-s3-exporter-athena",
		"description":   "Kubecost allocations exported by kubecost-s3-exporter, queried through the Glue view with the Amazon Athena data source. Same panels as the QuickSight dashboard.",
		"tags":          []string{"kubecost", "finops", "athena"},
		"schemaVersion": 39,
		"version":       1,
		"editable":      true,
		"time":          map[string]string{"from": "now-30d", "to": "now"},
		"timezone":      "utc",
		"graphTooltip":  1,
		"panels":        panels,
		"templating":    map[string]any{"list": variables()},
		"annotations":   map[string]any{"list": []any{}},
		"links":         []any{},
		"__requires": []any{
			map[string]string{"type": "datasource", "id": PluginID, "name": "Amazon Athena", "version": "2.0.0"},
			map[string]string{"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.0.0"},
		},
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func ds() map[string]string { return map[string]string{"type": PluginID, "uid": "${datasource}"} }

func target(sql string, format int) map[string]any {
	return map[string]any{
		"refId": "A", "datasource": ds(), "format": format, "rawSQL": sql,
		"connectionArgs": map[string]any{"region": "__default", "catalog": "__default", "database": "${database}", "resultReuseEnabled": false},
	}
}

func (p panel) render(id, x, y int) map[string]any {
	defaults := map[string]any{}
	if p.unit != "" {
		defaults["unit"] = p.unit
	}
	if p.kind == "timeseries" {
		defaults["custom"] = map[string]any{"drawStyle": "bars", "fillOpacity": 80, "stacking": map[string]string{"mode": "normal"}}
		if p.unit == "percent" {
			defaults["custom"] = map[string]any{"drawStyle": "line", "lineWidth": 2}
		}
	}
	out := map[string]any{
		"id": id, "type": p.kind, "title": p.title, "datasource": ds(),
		"gridPos":     map[string]int{"x": x, "y": y, "w": p.w, "h": p.h},
		"targets":     []any{target(p.sql, p.format)},
		"fieldConfig": map[string]any{"defaults": defaults, "overrides": []any{}},
	}
	if p.options != nil {
		out["options"] = p.options
	}
	return out
}

func variables() []any {
	return []any{
		map[string]any{"name": "datasource", "label": "Athena data source", "type": "datasource", "query": PluginID},
		map[string]any{"name": "database", "label": "Glue database", "type": "textbox", "query": "kubecost_db",
			"current": map[string]string{"text": "kubecost_db", "value": "kubecost_db"}},
		map[string]any{"name": "view", "label": "Athena view", "type": "textbox", "query": "kubecost_view",
			"current": map[string]string{"text": "kubecost_view", "value": "kubecost_view"}},
		map[string]any{"name": "cluster", "label": "Cluster", "type": "query", "datasource": ds(),
			"query":   target(`SELECT DISTINCT `+q("properties.eksClusterName")+` FROM "${database}"."${view}" ORDER BY 1`, table),
			"refresh": 2, "multi": true, "includeAll": true, "current": map[string]any{"text": "All", "value": "$__all"}},
		map[string]any{"name": "label", "label": "Label key (one of LABELS, lowercase)", "type": "textbox", "query": "app",
			"current": map[string]string{"text": "app", "value": "app"}},
	}
}
