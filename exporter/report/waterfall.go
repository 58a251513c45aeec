package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Waterfall is split.Steps summed for display, as the views' columns kubecost_cost,
// pricing_step, discounts_step, negotiated_step, split_bill_cost, idle_spread_step,
// split_weights_step and scad_cost. SCADOn: SCAD is on for a day summed; without it the chart
// stops at the split of the bill.
type Waterfall struct {
	Kubecost, Pricing, Discounts, Negotiated, SplitBill float64
	IdleSpread, SplitWeights, SCAD                      float64
	ListPriced                                          float64
	SCADOn                                              bool
}

// Add sums o into w (a cluster's total from its namespaces, a range from its days).
func (w *Waterfall) Add(o Waterfall) {
	w.Kubecost += o.Kubecost
	w.Pricing += o.Pricing
	w.Discounts += o.Discounts
	w.Negotiated += o.Negotiated
	w.SplitBill += o.SplitBill
	w.IdleSpread += o.IdleSpread
	w.SplitWeights += o.SplitWeights
	w.SCAD += o.SCAD
	w.ListPriced += o.ListPriced
	w.SCADOn = w.SCADOn || o.SCADOn
}

// NamespaceWaterfall is one namespace's steps over the report's days.
type NamespaceWaterfall struct {
	Namespace string
	Waterfall
}

// ClusterWaterfall is one cluster's steps over the report's days, in total and per namespace
// (largest split of the bill first).
type ClusterWaterfall struct {
	Cluster    ClusterRef
	Total      Waterfall
	Namespaces []NamespaceWaterfall
}

// step is one bar of the chart.
type step struct {
	Name, Label string
	Value       float64
	Total       bool // a level (drawn from 0), not a change
}

// steps lists w's bars: the levels Kubecost, split of the bill and SCAD, and the changes.
func (w Waterfall) steps() []step { return w.stepsWith(w.SCADOn) }

// stepsWith lists the steps with SCAD's or without (a namespace without SCAD's lines gets the
// columns of its cluster's table).
func (w Waterfall) stepsWith(scad bool) []step {
	out := []step{
		{"kubecost", "Kubecost", w.Kubecost, true},
		{"pricing", "+ pricing", w.Pricing, false},
		{"discounts", "+ discounts", w.Discounts, false},
		{"negotiated", "+ negotiated", w.Negotiated, false},
		{"split_bill", "= split of the bill", w.SplitBill, true},
	}
	if scad {
		out = append(out,
			step{"idle_spread", "+ idle spread", w.IdleSpread, false},
			step{"split_weights", "+ split weights", w.SplitWeights, false},
			step{"scad", "= SCAD", w.SCAD, true})
	}
	return out
}

// Colours: levels blue, a step lowering the cost green, raising it vermilion (Okabe-Ito).
const (
	levelColor = "#0072B2"
	downColor  = "#009E73"
	upColor    = "#D55E00"
)

const wfW, wfH, wfPadL, wfPadR, wfPadT, wfPadB = 960, 330, 78, 20, 28, 52

// waterfallChart draws a bar per step, a level from 0 and a change from the running level,
// the amount above it; each bar carries step, amount and data-from/data-to for tests.
func waterfallChart(name string, w Waterfall, currency string) *node {
	steps := w.steps()
	lo, hi, level := 0.0, 0.0, 0.0
	for _, s := range steps {
		if s.Total {
			level = s.Value
		} else {
			level += s.Value
		}
		lo, hi = math.Min(lo, level), math.Max(hi, level)
	}
	sc := niceScale(hi - lo)
	bottom := -math.Ceil(-lo/sc.Step-1e-9) * sc.Step
	top := bottom + math.Ceil((hi-bottom)/sc.Step-1e-9)*sc.Step
	if top <= bottom {
		top = bottom + sc.Step
	}
	plotW, plotH := float64(wfW-wfPadL-wfPadR), float64(wfH-wfPadT-wfPadB)
	y := func(v float64) float64 { return wfPadT + plotH*(top-v)/(top-bottom) }
	svg := frame(name, wfW, wfH)
	svg.attrs = append(svg.attrs, attr{"data-axis-min", num(bottom)}, attr{"data-axis-max", num(top)}, attr{"data-axis-step", num(sc.Step)},
		attr{"data-plot-top", num(wfPadT)}, attr{"data-plot-height", num(plotH)})
	for v := bottom; v <= top+sc.Step*1e-9; v += sc.Step {
		svg.add(el("line", "x1", wfPadL, "x2", wfW-wfPadR, "y1", y(v), "y2", y(v), "stroke", "#ddd"),
			text(wfPadL-6, y(v)+4, 11, "end", sc.label(v), "class", "tick", "data-value", num(v)))
	}
	svg.add(el("line", "x1", wfPadL, "x2", wfW-wfPadR, "y1", y(0), "y2", y(0), "stroke", "#888"))
	mid := float64(wfPadT) + plotH/2
	svg.add(text(14, mid, 11, "middle", "cost over the range ("+currency+")", "class", "axis-title", "transform", fmt.Sprintf("rotate(-90 14 %.1f)", mid)))
	bw := plotW / float64(len(steps))
	level = 0
	for i, s := range steps {
		from, to, color := level, level+s.Value, upColor
		switch {
		case s.Total:
			from, to, color = 0, s.Value, levelColor
		case s.Value < 0:
			color = downColor
		}
		x := float64(wfPadL) + bw*float64(i)
		barTop, h := y(math.Max(from, to)), math.Abs(y(from)-y(to))
		title := fmt.Sprintf("%s: %s", s.Label, money(s.Value, currency))
		svg.add(el("rect", "class", "mark step", "data-step", s.Name, "data-value", num(s.Value), "data-from", num(from), "data-to", num(to),
			"x", x+bw*0.15, "y", barTop, "width", bw*0.7, "height", math.Max(h, 0.5), "fill", color).titled(title))
		amount := fmt.Sprintf("%+.2f", s.Value)
		if s.Total {
			amount = fmt.Sprintf("%.2f", s.Value)
		}
		svg.add(text(x+bw/2, barTop-5, 11, "middle", amount, "class", "step-value"),
			text(x+bw/2, float64(wfH-wfPadB)+16, 11, "middle", s.Label, "class", "step-label"))
		if i+1 < len(steps) { // the connector to the next bar, at the level reached
			svg.add(el("line", "x1", x+bw*0.85, "x2", x+bw*1.15, "y1", y(to), "y2", y(to), "stroke", "#555", "stroke-dasharray", "3 2"))
		}
		level = to
	}
	return svg
}

// waterfallView is one cluster's chart and table, as the page shows them.
type waterfallView struct {
	Label string
	ID    string
	Chart template.HTML
	W     ClusterWaterfall
}

// waterfallViews renders each cluster's chart, largest namespaces first, labelled as elsewhere.
func waterfallViews(ws []ClusterWaterfall, currency string) []waterfallView {
	var refs []ClusterRef
	for _, w := range ws {
		refs = append(refs, w.Cluster)
	}
	labels, ids := clusterNames(refs)
	out := make([]waterfallView, 0, len(ws))
	for _, w := range ws {
		w.Namespaces = slices.Clone(w.Namespaces)
		slices.SortFunc(w.Namespaces, func(a, b NamespaceWaterfall) int {
			return cmp.Or(cmp.Compare(math.Abs(b.SplitBill), math.Abs(a.SplitBill)), cmp.Compare(a.Namespace, b.Namespace))
		})
		id := "waterfall-" + ids[w.Cluster]
		out = append(out, waterfallView{labels[w.Cluster], id, waterfallChart(id, w.Total, currency).html(), w})
	}
	return out
}

// The section "The difference step by step": per cluster the chart, then the steps per
// namespace. Every amount carries its full value in data-v.
var _ = template.Must(tmpl.New("waterfall").Parse(`<h3 id="waterfall">The difference step by step</h3>
<p class="meta">From Kubecost's cost of the namespaces the bill prices to <b>Kubecost's split of the bill</b>: each node's and volume's own cost on the bill that day, split by Kubecost's shares, the node's idle as its own row. <b>Pricing</b> is Kubecost's split at the bill's public on-demand prices less Kubecost: its price table against AWS's. <b>Discounts</b> is the split at amortized cost less at public on-demand: Reserved Instances, Savings Plans, Spot. <b>Negotiated</b> is net less amortized: EDP, credits. Where split cost allocation data is on, <b>idle spread</b> spreads each node's idle over its pods as SCAD spreads unused capacity, and <b>split weights</b> is SCAD's fixed weights against Kubecost's shares, to <b>SCAD</b>'s split plus unused. A green step lowers the cost, a vermilion one raises it. <b>List-priced</b> is Kubecost's own number where no bill line maps (Fargate, another account's bill, a day before the export), kept apart.</p>
{{range $w := .}}<h4>{{$w.Label}}</h4>
{{$w.Chart}}
<table class="waterfall" data-waterfall="{{$w.ID}}" data-account="{{$w.W.Cluster.Account}}" data-region="{{$w.W.Cluster.Region}}" data-cluster="{{$w.W.Cluster.Name}}">
<tr><th>namespace</th>{{range steps $w.W.Total $w.W.Total.SCADOn}}<th class="num">{{.Label}}</th>{{end}}<th class="num">list-priced</th></tr>
{{range $w.W.Namespaces}}<tr data-namespace="{{.Namespace}}"><td>{{.Namespace}}</td>{{range steps .Waterfall $w.W.Total.SCADOn}}<td class="num" data-step="{{.Name}}" data-v="{{raw .Value}}">{{money .Value}}</td>{{end}}<td class="num" data-step="list_priced" data-v="{{raw .ListPriced}}">{{money .ListPriced}}</td></tr>
{{end}}<tr data-namespace="TOTAL"><th>TOTAL</th>{{range steps $w.W.Total $w.W.Total.SCADOn}}<th class="num" data-step="{{.Name}}" data-v="{{raw .Value}}">{{money .Value}}</th>{{end}}<th class="num" data-step="list_priced" data-v="{{raw $w.W.Total.ListPriced}}">{{money $w.W.Total.ListPriced}}</th></tr>
</table>
{{end}}`))

// writeWaterfallText prints each cluster's steps on one line, as the
// report command shows them on stdout:
//
//	prod: Kubecost 100.00 + pricing -0.12 + discounts -21.30 + negotiated -3.00 = split of the bill 75.58 USD
//
// then each cluster's steps per namespace, the page's table as text: a step a column.
func writeWaterfallText(tw *tabwriter.Writer, ws []ClusterWaterfall, present map[CompareKey]Present, currency string) {
	if len(ws) == 0 {
		return
	}
	var refs []ClusterRef
	for _, w := range ws {
		refs = append(refs, w.Cluster)
	}
	labels, _ := clusterNames(refs)
	fmt.Fprint(tw, "\nThe difference step by step (over these days):\n")
	for _, w := range ws {
		var b strings.Builder
		for i, s := range w.Total.steps() {
			switch {
			case i == 0:
				fmt.Fprintf(&b, "%s %.2f", s.Label, s.Value)
			case s.Total:
				fmt.Fprintf(&b, " %s %.2f", s.Label, s.Value)
			default:
				fmt.Fprintf(&b, " %s %+.2f", s.Label, s.Value)
			}
		}
		fmt.Fprintf(tw, "  %s: %s %s", labels[w.Cluster], b.String(), currency)
		if w.Total.ListPriced != 0 {
			fmt.Fprintf(tw, "; list-priced, apart: %.2f", w.Total.ListPriced)
		}
		fmt.Fprintln(tw)
	}
	for _, w := range ws {
		// The table's title is the cluster's name alone.
		fmt.Fprintf(tw, "\n%s, %s\nnamespace\t", w.Cluster.Name, currency)
		for _, s := range w.Total.steps() {
			fmt.Fprintf(tw, "%s\t", strings.TrimLeft(s.Label, "+= "))
		}
		fmt.Fprint(tw, "list-priced\tpresent in\t\n")
		row := func(ns string, v Waterfall, p Present) {
			fmt.Fprintf(tw, "%s\t", ns)
			for _, s := range v.stepsWith(w.Total.SCADOn) {
				fmt.Fprintf(tw, "%.2f\t", s.Value)
			}
			fmt.Fprintf(tw, "%.2f\t%s\t\n", v.ListPriced, p)
		}
		for _, n := range w.Namespaces {
			row(n.Namespace, n.Waterfall, present[CompareKey{Cluster: w.Cluster, Namespace: n.Namespace}])
		}
		row("TOTAL", w.Total, "")
	}
}

// Waterfalls sums steps per namespace-day into each cluster's total and namespaces over the
// days, in the section's order. SCAD on for one namespace is on for the cluster's total.
func Waterfalls(byDay map[CompareKey]Waterfall) []ClusterWaterfall {
	type nsKey struct {
		c  ClusterRef
		ns string
	}
	ns := map[nsKey]*Waterfall{}
	for k, w := range byDay {
		entry(ns, nsKey{k.Cluster, k.Namespace}).Add(w)
	}
	byCluster := map[ClusterRef]*ClusterWaterfall{}
	for k, w := range ns {
		c := entry(byCluster, k.c)
		c.Cluster = k.c
		c.Total.Add(*w)
		c.Namespaces = append(c.Namespaces, NamespaceWaterfall{k.ns, *w})
	}
	out := make([]ClusterWaterfall, 0, len(byCluster))
	for _, c := range byCluster {
		slices.SortFunc(c.Namespaces, func(a, b NamespaceWaterfall) int { return cmp.Compare(a.Namespace, b.Namespace) })
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ClusterWaterfall) int { return a.Cluster.compare(b.Cluster) })
	return out
}

// waterfallsOf sums the comparison rows' CompareRow.Steps per cluster. SCAD is on for a
// namespace whose steps move past the split of the bill (split sets SCAD = SplitBill where off).
func waterfallsOf(cs []ClusterComparison) []ClusterWaterfall {
	byDay := map[CompareKey]Waterfall{}
	for _, c := range cs {
		for _, r := range c.Daily {
			s := r.Steps
			byDay[r.CompareKey] = Waterfall{Kubecost: s.Kubecost, Pricing: s.Pricing, Discounts: s.Discounts,
				Negotiated: s.Negotiated, SplitBill: s.SplitBill, IdleSpread: s.IdleSpread, SplitWeights: s.SplitWeights,
				SCAD: s.SCAD, ListPriced: s.ListPriced, SCADOn: s.IdleSpread != 0 || s.SplitWeights != 0 || s.SCAD != s.SplitBill}
		}
	}
	return Waterfalls(byDay)
}
