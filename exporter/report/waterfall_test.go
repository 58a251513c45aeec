package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	stepBarRE  = regexp.MustCompile(`<rect class="mark step" data-step="([a-z_]+)" data-value="([^"]+)" data-from="([^"]+)" data-to="([^"]+)" x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)" fill="([^"]+)"`)
	stepCellRE = regexp.MustCompile(`data-step="([a-z_]+)" data-v="([^"]+)"`)
	wfRowRE    = regexp.MustCompile(`(?s)<tr data-namespace="([^"]+)">(.*?)</tr>`)
	wfTableRE  = regexp.MustCompile(`(?s)<table class="waterfall" data-waterfall="([^"]+)"[^>]*>(.*?)</table>`)
)

type bar struct {
	step            string
	value, from, to float64
	y, height       float64
	fill            string
}

func bars(t *testing.T, svg string) []bar {
	t.Helper()
	var out []bar
	for _, m := range stepBarRE.FindAllStringSubmatch(svg, -1) {
		f := func(i int) float64 {
			v, err := strconv.ParseFloat(m[i], 64)
			if err != nil {
				t.Fatalf("bar %s: %q: %v", m[1], m[i], err)
			}
			return v
		}
		out = append(out, bar{m[1], f(2), f(3), f(4), f(6), f(8), m[9]})
	}
	return out
}

// TestWaterfallChartBars: each bar spans the levels its step moves
// between, at the axis' scale: the levels Kubecost, split of the bill and
// SCAD from 0, each change from the running level; a step that lowers
// the cost is green, one that raises it vermilion. The pixel positions
// are worked out here from the plot's size (250 px for 0-100 USD: 2.5 px
// a dollar), not from the chart's code.
func TestWaterfallChartBars(t *testing.T) {
	w := Waterfall{Kubecost: 100, Pricing: -2, Discounts: -25, Negotiated: -3, SplitBill: 70,
		IdleSpread: 5, SplitWeights: -1, SCAD: 74, ListPriced: 9, SCADOn: true}
	svg := waterfallChart("waterfall-prod", w, "USD").html()
	got := bars(t, string(svg))
	want := []struct {
		step     string
		from, to float64
		fill     string
	}{
		{"kubecost", 0, 100, levelColor}, {"pricing", 100, 98, downColor}, {"discounts", 98, 73, downColor},
		{"negotiated", 73, 70, downColor}, {"split_bill", 0, 70, levelColor}, {"idle_spread", 70, 75, upColor},
		{"split_weights", 75, 74, downColor}, {"scad", 0, 74, levelColor},
	}
	if len(got) != len(want) {
		t.Fatalf("%d bars, want %d: %+v", len(got), len(want), got)
	}
	if !strings.Contains(string(svg), `data-axis-min="0" data-axis-max="100"`) {
		t.Fatalf("axis is not 0-100: %.300s", svg)
	}
	const top, pxPerUSD = 28.0, 250.0 / 100
	for i, wb := range want {
		b := got[i]
		wantY, wantH := top+pxPerUSD*(100-math.Max(wb.from, wb.to)), pxPerUSD*math.Abs(wb.to-wb.from)
		if b.step != wb.step || math.Abs(b.from-wb.from) > 1e-9 || math.Abs(b.to-wb.to) > 1e-9 || b.fill != wb.fill {
			t.Errorf("bar %d: %+v, want %s from %v to %v in %s", i, b, wb.step, wb.from, wb.to, wb.fill)
		}
		if math.Abs(b.y-wantY) > 0.051 || math.Abs(b.height-wantH) > 0.051 {
			t.Errorf("bar %s: y %v height %v, want y %v height %v", b.step, b.y, b.height, wantY, wantH)
		}
	}
	if strings.Contains(string(svg), "list") {
		t.Error("the list-priced amount is drawn among the steps")
	}

	// Without SCAD the chart stops at the split of the bill.
	w.SCADOn = false
	if got := bars(t, string(waterfallChart("w", w, "USD").html())); len(got) != 5 || got[4].step != "split_bill" {
		t.Errorf("without SCAD: %+v", got)
	}
}

// TestWaterfallChartBelowZero: a step that takes the running level below
// 0 (credits larger than the cost) extends the axis below 0, and the bar
// still spans its two levels.
func TestWaterfallChartBelowZero(t *testing.T) {
	w := Waterfall{Kubecost: 10, Pricing: 0, Discounts: -4, Negotiated: -11, SplitBill: -5}
	svg := string(waterfallChart("w", w, "USD").html())
	m := regexp.MustCompile(`data-axis-min="([^"]+)" data-axis-max="([^"]+)"`).FindStringSubmatch(svg)
	lo, _ := strconv.ParseFloat(m[1], 64)
	hi, _ := strconv.ParseFloat(m[2], 64)
	if lo > -5 || lo < -10 || hi < 10 {
		t.Fatalf("axis %v to %v for levels -5 to 10", lo, hi)
	}
	px := 250 / (hi - lo)
	for _, b := range bars(t, svg) {
		if b.step == "negotiated" || b.step == "split_bill" {
			upper := math.Max(b.from, b.to)
			if math.Abs(b.y-(28+px*(hi-upper))) > 0.051 || math.Abs(b.height-px*math.Abs(b.to-b.from)) > 0.051 {
				t.Errorf("bar %+v: want y %v height %v", b, 28+px*(hi-upper), px*math.Abs(b.to-b.from))
			}
		}
	}
}

// TestWaterfallTable: the page's table has a row per namespace with every
// step's value, its total row, and the same columns for a namespace
// without SCAD's lines in a cluster with them; the text output prints the
// steps per cluster.
func TestWaterfallTable(t *testing.T) {
	day := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	prod := ClusterRef{"111122223333", "us-east-1", "prod"}
	pay := Waterfall{Kubecost: 60, Pricing: -1, Discounts: -15, Negotiated: -2, SplitBill: 42, IdleSpread: 3, SplitWeights: 0.5, SCAD: 45.5, SCADOn: true}
	batch := Waterfall{Kubecost: 20, Pricing: 0.25, Discounts: -6, Negotiated: -0.5, SplitBill: 13.75, SCAD: 13.75, ListPriced: 4}
	var total Waterfall
	total.Add(pay)
	total.Add(batch)
	d := &Data{From: day, To: day, Generated: day, Currency: "USD", Clusters: []ClusterRef{prod},
		Bill: &Comparison{Source: "s3://b/cur/", From: day, To: day, Waterfalls: []ClusterWaterfall{{Cluster: prod, Total: total,
			Namespaces: []NamespaceWaterfall{{"batch", batch}, {"payments", pay}}}}}}
	var b strings.Builder
	if err := Render(&b, d); err != nil {
		t.Fatal(err)
	}
	tables := wfTableRE.FindAllStringSubmatch(b.String(), -1)
	if len(tables) != 1 || tables[0][1] != "waterfall-prod" {
		t.Fatalf("waterfall tables %d", len(tables))
	}
	if !strings.Contains(b.String(), `data-chart="waterfall-prod"`) {
		t.Error("no waterfall chart")
	}
	rows := map[string]map[string]float64{}
	var order []string
	for _, r := range wfRowRE.FindAllStringSubmatch(tables[0][2], -1) {
		cells := map[string]float64{}
		n := 0
		for _, c := range stepCellRE.FindAllStringSubmatch(r[2], -1) {
			v, _ := strconv.ParseFloat(c[2], 64)
			cells[c[1]] = v
			n++
		}
		if n != 9 {
			t.Errorf("row %s has %d step cells, want 8 steps and list-priced", r[1], n)
		}
		rows[r[1]] = cells
		order = append(order, r[1])
	}
	if strings.Join(order, " ") != "payments batch TOTAL" {
		t.Errorf("rows %v, want the largest split of the bill first, then the total", order)
	}
	for ns, w := range map[string]Waterfall{"payments": pay, "batch": batch, "TOTAL": total} {
		want := map[string]float64{"kubecost": w.Kubecost, "pricing": w.Pricing, "discounts": w.Discounts, "negotiated": w.Negotiated,
			"split_bill": w.SplitBill, "idle_spread": w.IdleSpread, "split_weights": w.SplitWeights, "scad": w.SCAD, "list_priced": w.ListPriced}
		for k, v := range want {
			if got, ok := rows[ns][k]; !ok || got != v {
				t.Errorf("%s %s: %v, want %v", ns, k, got, v)
			}
		}
	}
	var text strings.Builder
	if err := WriteBillText(&text, d.Bill, "USD"); err != nil {
		t.Fatal(err)
	}
	line := "prod: Kubecost 80.00 + pricing -0.75 + discounts -21.00 + negotiated -2.50 = split of the bill 55.75 + idle spread +3.00 + split weights +0.50 = SCAD 59.25 USD; list-priced, apart: 4.00"
	if !strings.Contains(text.String(), line) {
		t.Errorf("text output lacks\n%s\n%s", line, text.String())
	}
}

// TestWaterfallsSum: namespace-days sum into each cluster's namespaces and
// total, the two prods of two accounts apart, and SCAD on for a cluster
// when any of its days has it.
func TestWaterfallsSum(t *testing.T) {
	d1, d2 := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)
	a, b := ClusterRef{"111122223333", "us-east-1", "prod"}, ClusterRef{"444455556666", "us-east-1", "prod"}
	got := Waterfalls(map[CompareKey]Waterfall{
		{a, "payments", d1}: {Kubecost: 10, Discounts: -2, SplitBill: 8, SCAD: 8},
		{a, "payments", d2}: {Kubecost: 6, Pricing: 1, SplitBill: 7, IdleSpread: 1, SCAD: 8, SCADOn: true},
		{a, "search", d1}:   {Kubecost: 4, Negotiated: -1, SplitBill: 3, SCAD: 3, ListPriced: 2},
		{b, "payments", d1}: {Kubecost: 100, SplitBill: 100, SCAD: 100},
	})
	if len(got) != 2 || got[0].Cluster != a || got[1].Cluster != b {
		t.Fatalf("clusters %+v", got)
	}
	want := Waterfall{Kubecost: 20, Pricing: 1, Discounts: -2, Negotiated: -1, SplitBill: 18, IdleSpread: 1, SCAD: 19, ListPriced: 2, SCADOn: true}
	if got[0].Total != want {
		t.Errorf("prod of %s: %+v, want %+v", a.Account, got[0].Total, want)
	}
	if len(got[0].Namespaces) != 2 || got[0].Namespaces[0].Namespace != "payments" || got[0].Namespaces[0].Kubecost != 16 {
		t.Errorf("namespaces of %s: %+v", a.Account, got[0].Namespaces)
	}
	if got[1].Total.Kubecost != 100 || got[1].Total.SCADOn {
		t.Errorf("prod of %s: %+v", b.Account, got[1].Total)
	}
}
