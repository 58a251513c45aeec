package report

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// page is what the template sees.
type page struct {
	D                    *Data
	Version              string
	Days                 []time.Time
	ClusterCharts        []namedChart
	PerCluster           template.HTML
	Workloads, Efficient template.HTML
	LabelCharts          []namedChart
	Calendar             template.HTML
	Counts               map[string]int
	Currency             string
	ClusterNames         []string  // d.Clusters as the page labels them
	Bill                 *billPage // the section "Kubecost and the bill", if any
}

type namedChart struct {
	Name  string
	Chart template.HTML
}

// The page is self-contained: inline styles and SVG, no script, a CSP forbidding all loading.
var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"money": func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"pct": func(v, total float64) string {
		if total == 0 {
			return "0.0"
		}
		return fmt.Sprintf("%.1f", 100*v/total)
	},
	"day": func(t time.Time) string { return t.Format(time.DateOnly) },
	// The bill's section (billhtml.go) and its waterfall (waterfall.go).
	"raw":     func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) },
	"diffpct": pctOf,
	"cluster": clusterLabel,
	"present": func(p Present) string {
		return map[Present]string{Both: "both", KubecostOnly: "Kubecost only", BillOnly: "bill only"}[p]
	},
	"steps": func(w Waterfall, scad bool) []step { return w.stepsWith(scad) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kubecost cost report {{day .D.From}} to {{day .D.To}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1000px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: #666; font-size: 13px; } table { border-collapse: collapse; font-size: 13px; }
td, th { padding: 3px 10px; text-align: left; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) { background: #f6f6f6; } svg.chart { display: block; margin: 8px 0; }
.empty { color: #999; font-style: italic; }
</style>
</head>
<body>
<h1>Kubecost cost report</h1>
<p class="meta">{{day .D.From}} to {{day .D.To}} · <span id="cluster-count">{{len .D.Clusters}}</span> {{if eq (len .D.Clusters) 1}}cluster{{else}}clusters{{end}}: {{range $i, $c := .ClusterNames}}{{if $i}}, {{end}}{{$c}}{{end}} ·
<span id="files">{{.D.Files}}</span> files · <span id="rows">{{.D.Rows}}</span> rows · total cost <span id="total">{{money .D.Total}}</span> <span class="currency">{{.Currency}}</span> ·
generated {{.D.Generated.Format "2006-01-02 15:04 MST"}} by kubecost-s3-exporter {{.Version}}</p>

<h2>Archive completeness</h2>
<p class="meta">One cell per cluster and day: stored ({{index .Counts "stored"}}); missing, a day Kubecost still holds but the archive lacks, which the exporter fills ({{index .Counts "missing"}}); no Kubecost data, a day Kubecost no longer holds that the archive does not hold either ({{index .Counts "no-kubecost-data"}}); or pending, not settled yet ({{index .Counts "pending"}}). Which days Kubecost holds is asked of Kubecost with the run's own settings, as the run asks it; where the report cannot ask, it is taken from Kubecost's retention (<code>-kubecost-retention-days</code>).</p>
{{.Calendar}}
{{with .Bill}}{{template "bill" .}}{{end}}
{{range .ClusterCharts}}<h2>Daily cost per namespace{{if .Name}}: {{.Name}}{{end}}</h2>
{{.Chart}}
{{end}}
{{with .PerCluster}}<h2>Daily cost per cluster</h2>
{{.}}
{{end}}
<h2>Top workloads (controller) by cost</h2>
{{if .D.Workloads}}{{.Workloads}}{{else}}<p class="empty">No allocation has a controller.</p>{{end}}

<h2>CPU and RAM cost against efficiency, per namespace</h2>
<p class="meta">Efficiency is usage over request, weighted by cost. Expensive and inefficient namespaces sit at the bottom right. Idle cost is not here: it has no usage, so no efficiency.</p>
{{.Efficient}}

{{range .LabelCharts}}<h2>Cost by label {{.Name}}</h2>
{{.Chart}}
{{else}}<h2>Cost by label</h2><p class="empty">The files hold no label columns (set LABELS on the exporter).</p>
{{end}}
<h2>Cost per namespace</h2>
<table id="namespaces">
<tr><th>namespace</th><th class="num">totalCost ({{.Currency}})</th><th class="num">share</th></tr>
{{range .D.Namespaces}}<tr data-namespace="{{.Name}}"><td>{{.Name}}</td><td class="num cost">{{money .Cost}}</td><td class="num">{{pct .Cost $.D.Total}}%</td></tr>
{{end}}<tr data-namespace="TOTAL"><th>TOTAL ({{.Currency}})</th><th class="num cost">{{money .D.Total}}</th><th></th></tr>
</table>
</body>
</html>
`))

// Render writes d as one self-contained HTML page.
func Render(w io.Writer, d *Data) error {
	cur := cmp.Or(d.Currency, "USD")
	p := page{D: d, Version: exporter.Version, Counts: map[string]int{}, Currency: cur}
	for day := d.From; !d.From.IsZero() && !day.After(d.To); day = day.AddDate(0, 0, 1) {
		p.Days = append(p.Days, day)
	}
	nsColors := namespaceColors(d.Namespaces)
	var series []string // every coloured namespace, largest first, then "(other)"
	for _, a := range d.Namespaces {
		if nsColors.of(a.Name) == a.Name {
			series = append(series, a.Name)
		}
	}
	series = append(series, other)
	labels, ids := clusterNames(d.Clusters)
	for _, c := range d.Clusters {
		p.ClusterNames = append(p.ClusterNames, labels[c])
		name := ""
		if len(d.Clusters) > 1 {
			name = labels[c]
		}
		chart := stackedBars("daily-namespace-"+ids[c], p.Days, d.Daily[c], series, nsColors, gaps(d.Calendar, []ClusterRef{c}, labels), cur)
		p.ClusterCharts = append(p.ClusterCharts, namedChart{name, chart.html()})
	}
	if len(d.Clusters) > 1 {
		cc := colors{}
		for i, c := range d.Clusters {
			cc[labels[c]] = palette[i%len(palette)]
		}
		byDay := map[time.Time]Amounts{}
		for day, m := range d.ClusterDaily {
			byDay[day] = Amounts{}
			for c, v := range m {
				byDay[day][labels[c]] += v
			}
		}
		p.PerCluster = stackedBars("daily-cluster", p.Days, byDay, p.ClusterNames, cc, gaps(d.Calendar, d.Clusters, labels), cur).html()
	}
	if len(d.Workloads) > 0 {
		p.Workloads = hbars("top-workloads", d.Workloads, 15, cur).html()
	}
	p.Efficient = scatter("efficiency", d.Efficiency, nsColors, cur).html()
	for _, l := range d.Labels {
		p.LabelCharts = append(p.LabelCharts, namedChart{l.Key, hbars("label-"+l.Key, l.Values, 12, cur).html()})
	}
	p.Calendar = calendarSVG("completeness", d.Clusters, labels, p.Days, d.Calendar).html()
	for _, byDay := range d.Calendar {
		for _, st := range byDay {
			p.Counts[string(st)]++
		}
	}
	if d.Bill != nil {
		p.Bill = &billPage{C: d.Bill, Currency: cur, Waterfalls: waterfallViews(d.Bill.Waterfalls, cur)}
	}
	return tmpl.Execute(w, p)
}

// gaps finds the days a bar chart of these clusters lacks: any misses it, or Kubecost had none.
func gaps(cal map[ClusterRef]map[time.Time]DayState, clusters []ClusterRef, labels map[ClusterRef]string) map[time.Time]gapMark {
	out := map[time.Time]gapMark{}
	byDay := map[time.Time]map[DayState][]string{}
	for _, c := range clusters {
		for day, st := range cal[c] {
			if byDay[day] == nil {
				byDay[day] = map[DayState][]string{}
			}
			byDay[day][st] = append(byDay[day][st], labels[c])
		}
	}
	for day, states := range byDay {
		switch {
		case len(states[Missing]) > 0:
			slices.Sort(states[Missing])
			out[day] = gapMark{Missing, fmt.Sprintf("%s: not in the archive for %s, though Kubecost has it",
				day.Format(time.DateOnly), strings.Join(states[Missing], ", "))}
		case len(states[NoKubecostData]) == len(clusters):
			out[day] = gapMark{NoKubecostData, day.Format(time.DateOnly) + ": no data (older than Kubecost's retention, not archived)"}
		}
	}
	return out
}

// clusterNames labels each cluster by its name where unique on the page, else with account
// and region (clusterLabel); ids are the same without spaces, for the charts' names.
func clusterNames(clusters []ClusterRef) (labels, ids map[ClusterRef]string) {
	count := map[string]int{}
	for _, c := range clusters {
		count[c.Name]++
	}
	labels, ids = map[ClusterRef]string{}, map[ClusterRef]string{}
	for _, c := range clusters {
		labels[c], ids[c] = c.Name, c.Name
		if count[c.Name] > 1 {
			labels[c] = fmt.Sprintf("%s (%s %s)", c.Name, c.Account, c.Region)
			ids[c] = c.Name + "-" + c.Account + "-" + c.Region
		}
	}
	return labels, ids
}
