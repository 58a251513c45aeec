package focuscheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// randomScenario is a split of a few days of instances and volumes with
// random pods, shares and costs, some resources the split lacks, and
// want: each workload's BilledCost, computed here with loops.
func randomScenario(seed uint64) ([]SplitRow, []curfixture.FocusRow, map[string]float64) {
	r := rand.New(rand.NewPCG(seed, 47))
	var split []SplitRow
	var export []curfixture.FocusRow
	want := map[string]float64{}
	for d := 0; d < 1+r.IntN(2); d++ {
		day := Day.AddDate(0, 0, d)
		for i := 0; i < 1+r.IntN(4); i++ {
			kind, id, unit := "instance", fmt.Sprintf("i-%04d", i), "Hours"
			if r.IntN(3) == 0 {
				kind, id, unit = "volume", fmt.Sprintf("vol-%04d", i), "GB-Mo"
			}
			inSplit := r.IntN(5) > 0
			var shares []float64
			var names []string
			if inSplit {
				n := 1 + r.IntN(5)
				total := 0.0
				for p := 0; p <= n; p++ {
					shares = append(shares, 0.05+r.Float64())
					total += shares[p]
				}
				for p := range shares {
					shares[p] /= total
					ns, ctrl := fmt.Sprintf("ns-%d", r.IntN(3)), fmt.Sprintf("app-%d", r.IntN(3))
					row := pod(id, kind, "node-"+id, ns, "deployment", ctrl, fmt.Sprintf("%s-%d", ctrl, p), shares[p], 0)
					row.UsageDate = day
					if p == n && kind == "instance" {
						row = idle(id, "node-"+id, shares[p], "both")
						row.UsageDate = day
						ns, ctrl = "__idle__", "__idle__"
					}
					split = append(split, row)
					names = append(names, id+"|"+ns+"|"+ctrl)
				}
			}
			for h := 0; h < 1+r.IntN(4); h++ {
				price := math.Round(r.Float64()*1e4) / 1e4
				billed := price * (0.5 + r.Float64()/2)
				line := curfixture.FocusLine(account, id, "Amazon Elastic Compute Cloud", "sku-"+id, day.Add(time.Duration(h)*time.Hour), price, billed, billed)
				line.PricingUnit = curfixture.S(unit)
				export = append(export, line)
				for p, s := range shares {
					want[names[p]] += billed * s
				}
			}
		}
	}
	return split, export, want
}

// TestRandomScenariosMeetFOCUS13 runs every check on random scenarios and
// holds each workload's allocated BilledCost against the loops'.
func TestRandomScenariosMeetFOCUS13(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			split, export, want := randomScenario(seed)
			if len(want) == 0 {
				t.Fatal("the scenario has no allocated charge")
			}
			db, views := open(t, split, export)
			for _, kind := range Kinds {
				rel := `main."` + views[kind].Name + `"`
				for _, r := range Run(db, Relations{rel, ExportTable, SplitTable, kind == "focus_replaced"}) {
					if r.Failed() {
						t.Errorf("%s: %s: %d violations, %v", kind, r.ID, r.Violations, r.Err)
					}
				}
			}
			rows, err := db.Query(`SELECT ResourceId || '|' || x_Namespace || '|' || x_Controller, SUM(BilledCost) FROM main."` +
				views["focus"].Name + `" GROUP BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			got := map[string]float64{}
			for rows.Next() {
				var k string
				var v float64
				if err := rows.Scan(&k, &v); err != nil {
					t.Fatal(err)
				}
				got[k] = v
			}
			if len(got) != len(want) {
				t.Errorf("%d workloads, want %d", len(got), len(want))
			}
			for k, w := range want {
				if math.Abs(got[k]-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("%s: BilledCost %v, want %v", k, got[k], w)
				}
			}
		})
	}
}
