package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"time"
)

// palette is colour-blind friendly first (Okabe-Ito), then distinct extras; greys are for Idle
// and "(other)".
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
	"#F0E442", "#6A3D9A", "#8C564B", "#17BECF", "#BCBD22", "#1F3A93"}

const (
	idleColor  = "#8F8F8F"
	otherColor = "#D4D4D4"
	other      = "(other)"
)

const (
	chartW, chartH = 960, 330
	padL, padR     = 78, 200
	padT, padB     = 20, 44
	legendChars    = 26 // the legend's width (padR) holds this many characters at 11px
)

// colors gives each name one colour for the whole page; names beyond the palette are "(other)".
type colors map[string]string

// namespaceColors colours the largest namespaces in order; Idle is grey.
func namespaceColors(byCost []Amount) colors {
	c := colors{Idle: idleColor, other: otherColor}
	i := 0
	for _, a := range byCost {
		if a.Name == Idle || i >= len(palette) {
			continue
		}
		c[a.Name] = palette[i]
		i++
	}
	return c
}

// of is the series a name is drawn in: itself when it has a colour, else "(other)".
func (c colors) of(name string) string {
	if _, ok := c[name]; ok {
		return name
	}
	return other
}

// scale is an axis from 0 to Max in ticks of Step.
type scale struct{ Max, Step float64 }

// niceScale picks the largest step of 1, 2 or 5 × 10^n giving at least four ticks below peak,
// and ends the axis at the first tick at or above it: round ticks, and a maximum less than a
// step (at most a quarter of peak) above it.
func niceScale(peak float64) scale {
	if peak <= 0 || math.IsNaN(peak) || math.IsInf(peak, 0) {
		return scale{1, 0.25}
	}
	p := math.Pow(10, math.Floor(math.Log10(peak/4)))
	step := p
	for _, m := range []float64{10, 5, 2, 1} {
		if peak/(m*p) >= 4 {
			step = m * p
			break
		}
	}
	n := math.Ceil(peak/step - 1e-9)
	return scale{Max: n * step, Step: step}
}

// ticks lists the tick values from 0 to Max.
func (s scale) ticks() []float64 {
	var out []float64
	for i := 0; float64(i)*s.Step <= s.Max*(1+1e-9); i++ {
		out = append(out, float64(i)*s.Step)
	}
	return out
}

// label prints a tick with the decimals its step needs, in thousands ("1.5k") from a step of 1000.
func (s scale) label(v float64) string {
	div, suffix := 1.0, ""
	if s.Step >= 1000 {
		div, suffix = 1000, "k"
	}
	dec := max(0, int(-math.Floor(math.Log10(s.Step/div)+1e-9)))
	return strconv.FormatFloat(v/div, 'f', dec, 64) + suffix
}

func money(v float64, currency string) string {
	return fmt.Sprintf("%.2f %s", v, currency)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// frame opens a chart's SVG; name is its id, checked by the tests.
func frame(name string, w, h int) *node {
	return el("svg", "class", "chart", "data-chart", name, "viewBox", fmt.Sprintf("0 0 %d %d", w, h),
		"width", "100%", "style", fmt.Sprintf("max-width:%dpx", w), "role", "img", "xmlns", "http://www.w3.org/2000/svg")
}

func text(x, y float64, size int, anchor, s string, pairs ...any) *node {
	return el("text", append([]any{"x", x, "y", y, "font-size", size, "text-anchor", anchor}, pairs...)...).say(s)
}

// yAxis draws the grid, the tick labels and the axis title.
func yAxis(svg *node, s scale, plotH int, title string, format func(float64) string) {
	svg.attrs = append(svg.attrs, attr{"data-axis-max", num(s.Max)}, attr{"data-axis-step", num(s.Step)})
	for _, v := range s.ticks() {
		y := float64(padT+plotH) - float64(plotH)*v/s.Max
		svg.add(el("line", "x1", padL, "x2", chartW-padR, "y1", y, "y2", y, "stroke", "#ddd"),
			text(padL-6, y+4, 11, "end", format(v), "class", "tick", "data-value", num(v)))
	}
	y := float64(padT + plotH/2)
	svg.add(text(14, y, 11, "middle", title, "class", "axis-title", "transform", fmt.Sprintf("rotate(-90 14 %.1f)", y)))
}

// legend lists series with their colours in the right margin.
func legend(svg *node, series []string, c colors) {
	for j, s := range series {
		y := padT + 4 + j*18
		svg.add(el("rect", "x", chartW-padR+12, "y", y, "width", 12, "height", 12, "fill", c[s], "data-series", s),
			text(float64(chartW-padR+30), float64(y+10), 11, "start", trunc(s, legendChars), "class", "legend").titled(s))
	}
}

// gapMark is how a bar chart shows a day without data: the reason in words.
type gapMark struct {
	state DayState
	title string
}

var gapStyle = map[DayState]struct{ color, word string }{
	Missing:        {"#D55E00", "not archived"},
	NoKubecostData: {"#8F8F8F", "no Kubecost data"},
}

// stackedBars draws a bar per day, stacked by series in order, and marks the days in gaps.
func stackedBars(name string, days []time.Time, byDay map[time.Time]Amounts, series []string, c colors, gaps map[time.Time]gapMark, currency string) *node {
	var peak float64
	for _, d := range days {
		var t float64
		for _, v := range byDay[d] {
			t += v
		}
		peak = math.Max(peak, t)
	}
	s := niceScale(peak)
	svg := frame(name, chartW, chartH)
	svg.attrs = append(svg.attrs, attr{"data-peak", num(peak)})
	plotW, plotH := chartW-padL-padR, chartH-padT-padB
	yAxis(svg, s, plotH, "cost per day ("+currency+")", s.label)
	bw := float64(plotW) / float64(max(len(days), 1))
	drawn := map[string]bool{}
	for i, d := range days {
		x := float64(padL) + bw*float64(i)
		if g, ok := gaps[d]; ok {
			st := gapStyle[g.state]
			cx, cy := x+bw/2, float64(padT+plotH/2)
			svg.add(el("rect", "class", "gap", "data-day", d.Format(time.DateOnly), "data-state", string(g.state),
				"x", x+1, "y", float64(padT), "width", math.Max(bw-2, 1), "height", float64(plotH),
				"fill", st.color, "fill-opacity", "0.10", "stroke", st.color, "stroke-dasharray", "4 3").titled(g.title),
				text(cx, cy, 10, "middle", st.word, "class", "gap-label", "fill", st.color, "transform", fmt.Sprintf("rotate(-90 %.1f %.1f)", cx, cy)))
		}
		sums := Amounts{}
		for k, v := range byDay[d] {
			sums[c.of(k)] += v
		}
		y := float64(padT + plotH)
		for _, ser := range series {
			v := sums[ser]
			if v <= 0 {
				continue
			}
			drawn[ser] = true
			h := v / s.Max * float64(plotH)
			y -= h
			svg.add(el("rect", "class", "mark", "data-day", d.Format(time.DateOnly), "data-series", ser, "data-value", num(v),
				"x", x+1, "y", y, "width", math.Max(bw-2, 1), "height", h, "fill", c[ser]).
				titled(fmt.Sprintf("%s %s: %s", d.Format(time.DateOnly), ser, money(v, currency))))
		}
		if len(days) <= 16 || i%(len(days)/12+1) == 0 {
			svg.add(text(x+bw/2, float64(padT+plotH+14), 10, "middle", d.Format("Jan 2")))
		}
	}
	var shown []string
	for _, ser := range series {
		if drawn[ser] {
			shown = append(shown, ser)
		}
	}
	legend(svg, shown, c)
	return svg
}

// hbars draws the n largest amounts as horizontal bars with their values.
func hbars(name string, items []Amount, n int, currency string) *node {
	items = items[:min(n, len(items))]
	const rowH, labelW, w = 22, 330, 960
	h := padT + len(items)*rowH + 10
	var peak float64
	for _, a := range items {
		peak = math.Max(peak, a.Cost)
	}
	s := niceScale(peak)
	svg := frame(name, w, max(h, 1))
	for i, a := range items {
		y := padT + i*rowH
		bw := math.Max(a.Cost/s.Max*float64(w-labelW-120), 0)
		name := cmp.Or(a.Name, "(not set)") // a label column's rows without the label
		svg.add(text(labelW-8, float64(y+14), 11, "end", trunc(name, 52)).titled(name),
			el("rect", "class", "mark", "x", labelW, "y", y+2, "width", math.Max(bw, 1), "height", rowH-6, "fill", palette[0]).
				titled(name+": "+money(a.Cost, currency)),
			text(float64(labelW)+bw+6, float64(y+14), 11, "start", money(a.Cost, currency), "class", "value"))
	}
	return svg
}

func trunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
