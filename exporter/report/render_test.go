package report

import (
	"strings"
	"testing"
	"time"
)

// TestHostileNamesInert: namespaces, controllers, label values and cluster
// names come from the archive, so from anyone who can label a pod. Markup
// in them must come out as text in every chart, tooltip and table.
func TestHostileNamesInert(t *testing.T) {
	day := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	const script, onload = `<script>alert(1)</script>`, `"><svg onload=alert(2)>`
	cluster := ClusterRef{"111122223333", "us-east-1", `prod"><img src=x onerror=alert(3)>`}
	b2 := ClusterRef{`"><b>`, "us-east-1", "b"}
	d := &Data{
		From: day, To: day.AddDate(0, 0, 1), Generated: day, Currency: "USD", Clusters: []ClusterRef{cluster, b2},
		Total:      30,
		Namespaces: []Amount{{script, 20}, {onload, 10}},
		Daily: map[ClusterRef]map[time.Time]Amounts{
			cluster: {day: {script: 20}},
			b2:      {day: {onload: 10}},
		},
		ClusterDaily: map[time.Time]map[ClusterRef]float64{day: {cluster: 20, b2: 10}},
		Workloads:    []Amount{{script + "/Deployment/" + onload, 30}},
		Efficiency:   []Efficiency{{Namespace: script, CPUCost: 5, RAMCost: 4, CPUEff: 0.3, RAMEff: 0.5}, {Namespace: onload, CPUCost: 2, RAMCost: 1, CPUEff: 0.9, RAMEff: 0.1}},
		Labels:       []LabelCosts{{Key: "team" + onload, Values: []Amount{{script, 20}, {onload, 10}}}},
		Calendar: map[ClusterRef]map[time.Time]DayState{
			cluster: {day: Stored, day.AddDate(0, 0, 1): Missing},
			b2:      {day: Stored, day.AddDate(0, 0, 1): Stored},
		},
	}
	var b strings.Builder
	if err := Render(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<svg onload", "<img", `"><svg`, `"><img`, "<b>"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("page holds live markup %q: ...%s...", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	// The names are there, as text.
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;svg onload=alert(2)&gt;"} {
		if n := strings.Count(page, want); n < 5 {
			t.Errorf("%q shown %d times, want it in the charts, tooltips and table", want, n)
		}
	}
	if n := strings.Count(page, "<svg "); n != 7 { // calendar, 2 daily, per cluster, workloads, efficiency, 1 label
		t.Errorf("%d <svg> elements, want 7: a name opened one", n)
	}
}
