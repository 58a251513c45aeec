package report

import (
	"fmt"
	"math"
	"time"
)

// maxScatter is how many (most expensive) namespaces the efficiency chart labels; more overlap.
const maxScatter = 15

// scatter plots each namespace's CPU and RAM cost (x) against its cost-weighted efficiency (y),
// labelled and coloured as elsewhere; the expensive, wasteful ones sit bottom right. Idle has
// no usage, so is not in eff.
func scatter(name string, eff []Efficiency, c colors, currency string) *node {
	eff = eff[:min(len(eff), maxScatter)]
	var peakCost, peakEff float64
	for _, e := range eff {
		peakCost = math.Max(peakCost, math.Max(e.CPUCost, e.RAMCost))
		peakEff = math.Max(peakEff, math.Max(e.CPUEff, e.RAMEff))
	}
	xs := niceScale(peakCost)
	ys := scale{Max: 1, Step: 0.25}
	if peakEff > 1 {
		ys = niceScale(peakEff)
	}
	svg := frame(name, chartW, chartH)
	plotW, plotH := chartW-padL-padR, chartH-padT-padB
	yAxis(svg, ys, plotH, "efficiency (usage / request)", func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) })
	svg.attrs = append(svg.attrs, attr{"data-x-axis-max", num(xs.Max)}, attr{"data-x-axis-step", num(xs.Step)})
	for _, v := range xs.ticks() {
		x := float64(padL) + float64(plotW)*v/xs.Max
		svg.add(el("line", "x1", x, "x2", x, "y1", float64(padT), "y2", float64(padT+plotH), "stroke", "#eee"),
			text(x, float64(padT+plotH+16), 11, "middle", xs.label(v), "class", "tick x-tick", "data-value", num(v)))
	}
	svg.add(text(float64(padL+plotW/2), float64(padT+plotH+36), 11, "middle", "cost over the range ("+currency+")", "class", "axis-title x-axis-title"))
	pt := func(cost, e float64, what, ns string) {
		x := float64(padL) + cost/xs.Max*float64(plotW)
		y := float64(padT+plotH) - math.Min(math.Max(e, 0), ys.Max)/ys.Max*float64(plotH)
		color := c[c.of(ns)]
		title := fmt.Sprintf("%s %s: cost %s, efficiency %.0f%%", ns, what, money(cost, currency), e*100)
		var mark *node
		if what == "CPU" {
			mark = el("circle", "cx", x, "cy", y, "r", 6)
		} else {
			mark = el("rect", "x", x-5.5, "y", y-5.5, "width", 11, "height", 11)
		}
		mark.attrs = append(mark.attrs, attr{"class", "mark point"}, attr{"data-namespace", ns}, attr{"data-kind", what},
			attr{"fill", color}, attr{"fill-opacity", "0.8"}, attr{"stroke", "#333"}, attr{"stroke-width", "0.5"})
		svg.add(mark.titled(title),
			text(x+9, y+4, 10, "start", trunc(ns, 24), "class", "point-label", "data-namespace", ns).titled(title))
	}
	for _, e := range eff {
		if e.CPUCost > 0 {
			pt(e.CPUCost, e.CPUEff, "CPU", e.Namespace)
		}
		if e.RAMCost > 0 {
			pt(e.RAMCost, e.RAMEff, "RAM", e.Namespace)
		}
	}
	lx := float64(chartW - padR + 18)
	svg.add(el("circle", "cx", lx, "cy", float64(padT+10), "r", 6, "fill", "#fff", "stroke", "#333"),
		text(lx+14, float64(padT+14), 11, "start", "CPU cost, CPU efficiency", "class", "legend"),
		el("rect", "x", lx-5.5, "y", float64(padT+22.5), "width", 11, "height", 11, "fill", "#fff", "stroke", "#333"),
		text(lx+14, float64(padT+32), 11, "start", "RAM cost, RAM efficiency", "class", "legend"),
		text(lx-6, float64(padT+56), 11, "start", "colour: namespace", "class", "legend"))
	return svg
}

// calendarStyle is each calendar state's colour and legend text.
var calendarStyle = []struct {
	state       DayState
	color, text string
}{
	{Stored, "#009E73", "stored in the archive"},
	{Missing, "#D55E00", "missing: Kubecost has it, the archive does not"},
	{NoKubecostData, "#C8C8C8", "no Kubecost data (older than its retention)"},
	{NotYetAvailable, "#56B4E9", "pending: not settled, a later run exports it"},
}

// calendarSVG draws one row of day cells per cluster, every day labelled.
func calendarSVG(name string, clusters []ClusterRef, labels map[ClusterRef]string, days []time.Time, cal map[ClusterRef]map[time.Time]DayState) *node {
	const cell, labelW, top = 22, 230, 34
	color := map[DayState]string{}
	for _, s := range calendarStyle {
		color[s.state] = s.color
	}
	w := max(labelW+len(days)*cell+20, 720)
	h := top + len(clusters)*(cell+4) + 12 + len(calendarStyle)*18
	svg := frame(name, w, h)
	for i, d := range days {
		x := float64(labelW + i*cell + (cell-2)/2)
		if i == 0 || d.Day() == 1 {
			svg.add(text(float64(labelW+i*cell), 12, 11, "start", d.Format("Jan 2006"), "class", "month"))
		}
		svg.add(text(x, top-6, 10, "middle", d.Format("2"), "class", "day-label"))
	}
	for r, c := range clusters {
		y := top + r*(cell+4)
		label := labels[c]
		svg.add(text(labelW-8, float64(y+15), 11, "end", trunc(label, 36), "class", "cluster-label").titled(label))
		for i, d := range days {
			st := cal[c][d]
			svg.add(el("rect", "class", "mark day-"+string(st), "data-day", d.Format(time.DateOnly), "data-cluster", c.Name,
				"data-state", string(st), "data-account", c.Account, "data-region", c.Region,
				"x", labelW+i*cell, "y", y, "width", cell-2, "height", cell, "fill", color[st]).
				titled(fmt.Sprintf("%s %s: %s", label, d.Format(time.DateOnly), st)))
		}
	}
	y := top + len(clusters)*(cell+4) + 8
	for i, s := range calendarStyle {
		svg.add(el("rect", "x", labelW, "y", y+i*18, "width", 12, "height", 12, "fill", s.color),
			text(float64(labelW+18), float64(y+i*18+10), 11, "start", s.text, "class", "legend"))
	}
	return svg
}
