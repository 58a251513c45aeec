package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"text/tabwriter"
	"time"
)

// The section "Kubecost and the bill" (compare.go). Every amount cell carries its full value in
// a data attribute, so tests (and scrapers) compare numbers, not rounding.

type billPage struct {
	C          *Comparison
	Currency   string
	Waterfalls []waterfallView
}

// A template of the page's set ({{template "bill"}}), so it streams to the page's writer, not
// built in memory first: its rows grow with clusters × namespaces × days.
var _ = template.Must(tmpl.New("bill").Parse(`<h2 id="bill">Kubecost and the bill</h2>
<p class="meta">The bill is the CUR 2.0 export at <code>{{.C.Source}}</code> with split cost allocation data (<span id="bill-files">{{.C.Files}}</span> files, <span id="bill-lines">{{.C.Lines}}</span> pod lines; {{.C.Skipped}} of {{.C.RowGroups}} row groups skipped by their dates), read as AWS's own SCAD dashboard reads it.
Like for like, per namespace and day: <b>Kubecost</b> is its CPU, RAM and GPU cost (with adjustments), at the prices Kubecost uses (list prices unless its own CUR integration is configured); the <b>bill</b> is its pods' split cost plus their share of their instances' unused cost, at your rates (Reserved Instances, Savings Plans), as amortized cost. Kubecost keeps idle capacity apart, on its own row <code>__idle__</code>, which the bill does not have: compare a cluster's totals, or its idle with the bill's unused cost. The <b>difference</b> is Kubecost less the bill. <b>Only Kubecost</b> is what split cost allocation data does not split: persistent volumes, network and load balancers. Rows only one side has are kept: a namespace the archive lacks is "bill only", one the bill lacks (not on EKS, not in this account's export, or before split cost allocation data was turned on) "Kubecost only". The same rows are the Athena view <code>namespace_daily</code> of the bill module.</p>
{{with .C.Outside}}<div id="bill-outside"><p class="meta"><b>Not compared: the bill's days outside the report's.</b> The rows below are the report's days, {{day $.C.From}} to {{day $.C.To}} (without <code>-from</code> and <code>-to</code>, the archive's days). An invoice is a month: the bill was read over its billing periods, {{day $.C.ReadFrom}} to {{day $.C.ReadTo}}, and on the other days it holds:</p>
<ul class="meta">{{range .}}<li class="bill-outside" data-account="{{.Cluster.Account}}" data-region="{{.Cluster.Region}}" data-cluster="{{.Cluster.Name}}" data-days="{{.Days}}" data-bill="{{raw .Bill.Cost}}" data-bill-net="{{raw .Bill.Net}}">{{cluster .Cluster}}: {{money .Bill.Cost}} {{$.Currency}} (after discounts {{money .Bill.Net}}) on {{.Days}} days from {{day .From}} to {{day .To}}</li>
{{end}}</ul>
<p class="meta">To include them, give <code>-from</code> and <code>-to</code> (for example the whole month): a day the archive does not hold then shows as "bill only".</p></div>
{{end}}{{with .Waterfalls}}{{template "waterfall" .}}{{end}}{{range $c := .C.Clusters}}<h3>{{cluster $c.Cluster}}</h3>
<p class="meta bill-total" data-cluster="{{$c.Cluster.Name}}" data-account="{{$c.Cluster.Account}}" data-region="{{$c.Cluster.Region}}">Over these days: Kubecost <span data-v="{{raw $c.Total.Kubecost.Compute}}">{{money $c.Total.Kubecost.Compute}}</span>, the bill <span data-v="{{raw $c.Total.Bill.Cost}}">{{money $c.Total.Bill.Cost}}</span> (after discounts {{money $c.Total.Bill.Net}}, at public on-demand prices {{money $c.Total.Bill.PublicOnDemand}}), difference {{money $c.Total.Difference}} {{$.Currency}} ({{diffpct $c.Total.Difference $c.Total.Bill.Cost}} of the bill). Of these, Kubecost's idle {{money $c.Total.Kubecost.Idle}} against the bill's unused cost {{money $c.Total.Bill.Unused}}. Only Kubecost: {{money $c.Total.Kubecost.OnlyKubecost}} {{$.Currency}}.</p>
<table class="bill-namespaces">
<tr><th>namespace</th><th class="num">Kubecost ({{$.Currency}})</th><th class="num">bill</th><th class="num">difference</th><th class="num">of the bill</th><th class="num">only Kubecost</th><th>present in</th></tr>
{{range $c.Namespaces}}<tr data-bill-namespace="{{.Namespace}}"><td>{{.Namespace}}</td><td class="num" data-v="{{raw .Kubecost.Compute}}">{{money .Kubecost.Compute}}</td><td class="num" data-v="{{raw .Bill.Cost}}">{{money .Bill.Cost}}</td><td class="num">{{money .Difference}}</td><td class="num">{{diffpct .Difference .Bill.Cost}}</td><td class="num" data-v="{{raw .Kubecost.OnlyKubecost}}">{{money .Kubecost.OnlyKubecost}}</td><td>{{present .Present}}</td></tr>
{{end}}</table>
<details><summary>Per namespace and day ({{len $c.Daily}} rows)</summary>
<table class="bill-daily">
<tr><th>day</th><th>namespace</th><th class="num">Kubecost ({{$.Currency}})</th><th class="num">bill</th><th class="num">difference</th><th class="num">only Kubecost</th><th>present in</th></tr>
{{range $c.Daily}}<tr class="bill-day" data-account="{{$c.Cluster.Account}}" data-region="{{$c.Cluster.Region}}" data-cluster="{{$c.Cluster.Name}}" data-day="{{day .Day}}" data-namespace="{{.Namespace}}" data-kubecost="{{raw .Kubecost.Compute}}" data-bill="{{raw .Bill.Cost}}" data-bill-net="{{raw .Bill.Net}}" data-bill-split="{{raw .Bill.Split}}" data-bill-unused="{{raw .Bill.Unused}}" data-kubecost-idle="{{raw .Kubecost.Idle}}" data-kubecost-only="{{raw .Kubecost.OnlyKubecost}}" data-present="{{.Present}}"><td>{{day .Day}}</td><td>{{.Namespace}}</td><td class="num">{{money .Kubecost.Compute}}</td><td class="num">{{money .Bill.Cost}}</td><td class="num">{{money .Difference}}</td><td class="num">{{money .Kubecost.OnlyKubecost}}</td><td>{{present .Present}}</td></tr>
{{end}}</table>
</details>
{{else}}<p class="empty">Neither the archive nor the bill has a cluster in these days.</p>
{{end}}`))

// clusterLabel names a cluster with its account and region (two accounts may have a "prod").
func clusterLabel(c ClusterRef) string {
	return fmt.Sprintf("%s (account %s, %s)", c.Name, c.Account, c.Region)
}

// WriteBillText prints the comparison per cluster and namespace, as the report command's stdout.
func WriteBillText(w io.Writer, c *Comparison, currency string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "Kubecost and the bill (%s: %d files, %d pod lines; %d of %d row groups skipped by date)\n",
		c.Source, c.Files, c.Lines, c.Skipped, c.RowGroups)
	if len(c.Outside) > 0 {
		fmt.Fprintf(tw, "Compared: %s to %s. Not compared, the bill's other days of its billing periods (%s to %s; give -from and -to to include them):\n",
			c.From.Format(time.DateOnly), c.To.Format(time.DateOnly), c.ReadFrom.Format(time.DateOnly), c.ReadTo.Format(time.DateOnly))
		for _, o := range c.Outside {
			fmt.Fprintf(tw, "  %s: %.2f %s (after discounts %.2f) on %d days from %s to %s\n", clusterLabel(o.Cluster),
				o.Bill.Cost(), currency, o.Bill.Net(), o.Days, o.From.Format(time.DateOnly), o.To.Format(time.DateOnly))
		}
	}
	present := map[CompareKey]Present{}
	for _, cl := range c.Clusters {
		for _, r := range cl.Namespaces {
			present[r.CompareKey] = r.Present
		}
	}
	writeWaterfallText(tw, c.Waterfalls, present, currency)
	return tw.Flush()
}

func pctOf(diff, base float64) string {
	if base == 0 || math.IsNaN(diff) {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100*diff/base)
}
