package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
)

// palette is colour-blind friendly (Okabe-Ito plus greys).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000", "#999999", "#6A3D9A"}

const (
	chartW, chartH = 960, 320
	padL, padR     = 70, 170
	padT, padB     = 20, 40
)

type svgBuf struct{ strings.Builder }

func (b *svgBuf) f(format string, args ...any) { fmt.Fprintf(b, format, args...) }

func esc(s string) string { return html.EscapeString(s) }

// open starts an SVG; name is the chart's id, checked by the browser test.
func (b *svgBuf) open(name string, w, h int) {
	b.f(`<svg class="chart" data-chart="%s" viewBox="0 0 %d %d" width="100%%" style="max-width:%dpx" role="img" xmlns="http://www.w3.org/2000/svg">`, esc(name), w, h, w)
}

func (b *svgBuf) close() template.HTML {
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built only from escaped text and numbers
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func money(v float64) string {
	switch {
	case math.Abs(v) >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case math.Abs(v) >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.2f", v)
}

// yAxis draws horizontal grid lines and labels from 0 to max.
func (b *svgBuf) yAxis(max float64, plotH int, format func(float64) string) {
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		y := float64(padT+plotH) - float64(plotH)*float64(i)/4
		b.f(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, padL, chartW-padR, y, y)
		b.f(`<text x="%d" y="%.1f" text-anchor="end" font-size="11" dy="4">%s</text>`, padL-6, y, esc(format(v)))
	}
}

// topSeries keeps the n largest series and folds the rest into "other".
func topSeries(totals []Amount, n int) (keep []string, other bool) {
	for i, a := range totals {
		if i < n {
			keep = append(keep, a.Name)
		} else {
			other = true
		}
	}
	return keep, other
}

// stackedBars draws one bar per day, stacked by series.
func stackedBars(name string, days []time.Time, byDay map[time.Time]Amounts, totals []Amount) template.HTML {
	keep, other := topSeries(totals, 9)
	series := slices.Clone(keep)
	if other {
		series = append(series, "(other)")
	}
	val := func(day time.Time, s string) float64 {
		if s != "(other)" {
			return byDay[day][s]
		}
		var v float64
		for k, c := range byDay[day] {
			if !slices.Contains(keep, k) {
				v += c
			}
		}
		return v
	}
	var max float64
	for _, d := range days {
		var t float64
		for _, c := range byDay[d] {
			t += c
		}
		max = math.Max(max, t)
	}
	max = niceMax(max)
	var b svgBuf
	b.open(name, chartW, chartH)
	plotW, plotH := chartW-padL-padR, chartH-padT-padB
	b.yAxis(max, plotH, money)
	bw := float64(plotW) / float64(max1(len(days)))
	for i, d := range days {
		x := float64(padL) + bw*float64(i)
		y := float64(padT + plotH)
		for j, s := range series {
			v := val(d, s)
			if v <= 0 {
				continue
			}
			h := v / max * float64(plotH)
			y -= h
			b.f(`<rect class="mark" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
				x+1, y, math.Max(bw-2, 1), h, palette[j%len(palette)], d.Format(time.DateOnly), esc(label(s)), money(v))
		}
		if len(days) <= 16 || i%(len(days)/8+1) == 0 {
			b.f(`<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`, x+bw/2, padT+plotH+14, d.Format("01-02"))
		}
	}
	b.legend(series)
	return b.close()
}

func (b *svgBuf) legend(series []string) {
	for j, s := range series {
		y := padT + 4 + j*18
		b.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`, chartW-padR+12, y, palette[j%len(palette)])
		b.f(`<text x="%d" y="%d" font-size="11">%s</text>`, chartW-padR+30, y+10, esc(trunc(label(s), 22)))
	}
}

// hbars draws the n largest amounts as horizontal bars.
func hbars(name string, items []Amount, n int) template.HTML {
	items = items[:min(n, len(items))]
	rowH := 22
	h := padT + len(items)*rowH + 10
	const labelW, w = 330, 960
	var max float64
	for _, a := range items {
		max = math.Max(max, a.Cost)
	}
	max = niceMax(max)
	var b svgBuf
	b.open(name, w, max1(h))
	for i, a := range items {
		y := padT + i*rowH
		bw := math.Max(a.Cost/max*float64(w-labelW-90), 0)
		b.f(`<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`, labelW-8, y+14, esc(trunc(label(a.Name), 52)))
		b.f(`<rect class="mark" x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s</title></rect>`,
			labelW, y+2, math.Max(bw, 1), rowH-6, palette[0], esc(label(a.Name)), money(a.Cost))
		b.f(`<text x="%.1f" y="%d" font-size="11">%s</text>`, float64(labelW)+bw+6, y+14, money(a.Cost))
	}
	return b.close()
}

// scatter plots each namespace's CPU and RAM cost (x) against its
// cost-weighted efficiency (y): the expensive, wasteful ones sit bottom right.
func scatter(name string, eff []Efficiency) template.HTML {
	var max float64
	for _, e := range eff {
		max = math.Max(max, math.Max(e.CPUCost, e.RAMCost))
	}
	max = niceMax(max)
	var b svgBuf
	b.open(name, chartW, chartH)
	plotW, plotH := chartW-padL-padR, chartH-padT-padB
	b.yAxis(1, plotH, func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) })
	for i := 0; i <= 4; i++ {
		x := float64(padL) + float64(plotW)*float64(i)/4
		b.f(`<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`, x, padT+plotH+16, money(max*float64(i)/4))
	}
	pt := func(cost, e float64, color, shape, what, ns string) {
		x := float64(padL) + cost/max*float64(plotW)
		y := float64(padT+plotH) - math.Min(math.Max(e, 0), 1)*float64(plotH)
		title := fmt.Sprintf("%s %s: cost %s, efficiency %.0f%%", esc(label(ns)), what, money(cost), e*100)
		if shape == "circle" {
			b.f(`<circle class="mark" cx="%.1f" cy="%.1f" r="6" fill="%s" fill-opacity="0.75"><title>%s</title></circle>`, x, y, color, title)
		} else {
			b.f(`<rect class="mark" x="%.1f" y="%.1f" width="11" height="11" fill="%s" fill-opacity="0.75"><title>%s</title></rect>`, x-5.5, y-5.5, color, title)
		}
	}
	for _, e := range eff {
		if e.CPUCost > 0 {
			pt(e.CPUCost, e.CPUEff, palette[0], "circle", "CPU", e.Namespace)
		}
		if e.RAMCost > 0 {
			pt(e.RAMCost, e.RAMEff, palette[1], "rect", "RAM", e.Namespace)
		}
	}
	b.legend([]string{"CPU cost vs CPU efficiency", "RAM cost vs RAM efficiency"})
	return b.close()
}

var stateColor = map[DayState]string{Stored: "#009E73", Missing: "#D55E00", OutsideWindow: "#bbbbbb", NotYetAvailable: "#56B4E9"}

// calendarSVG draws one row of day cells per cluster.
func calendarSVG(name string, clusters []string, days []time.Time, cal map[string]map[time.Time]DayState) template.HTML {
	const cell, labelW = 14, 180
	w := labelW + len(days)*cell + 20
	h := padT + len(clusters)*(cell+6) + 30
	var b svgBuf
	b.open(name, max(w, labelW+4*130+20), h)
	for i, d := range days {
		if d.Day() == 1 || i == 0 {
			b.f(`<text x="%d" y="%d" font-size="10">%s</text>`, labelW+i*cell, padT-6, d.Format("Jan 2"))
		}
	}
	for r, c := range clusters {
		y := padT + r*(cell+6)
		b.f(`<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`, labelW-8, y+11, esc(trunc(c, 28)))
		for i, d := range days {
			st := cal[c][d]
			b.f(`<rect class="mark day-%s" data-day="%s" data-cluster="%s" data-state="%s" x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %s: %s</title></rect>`,
				st, d.Format(time.DateOnly), esc(c), st, labelW+i*cell, y, cell-2, cell, stateColor[st], esc(c), d.Format(time.DateOnly), st)
		}
	}
	y := padT + len(clusters)*(cell+6) + 8
	x := labelW
	for _, st := range []DayState{Stored, Missing, OutsideWindow, NotYetAvailable} {
		b.f(`<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="11">%s</text>`, x, y, stateColor[st], x+16, y+10, st)
		x += 130
	}
	return b.close()
}

func label(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func trunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func max1(n int) int { return max(n, 1) }
