package focuscheck

import (
	"fmt"
	"strings"
	"testing"
)

// TestFocusDemo prints, with -v, a few allocated charges of the canonical
// scenario and the check summary, for `make demo`:
//
//	go test ./terraform/internal/focuscheck -run TestFocusDemo -count=1 -v
func TestFocusDemo(t *testing.T) {
	db, views := open(t, CanonicalSplit(), CanonicalFocus())
	rows, err := db.Query(`SELECT ResourceId, x_ResourceKind, coalesce(AllocatedResourceName, '(idle)'), SUM(BilledCost), SUM(EffectiveCost), SUM(ListCost)
		FROM main."` + views["focus"].Name + `" GROUP BY ALL ORDER BY 1, 2, 3`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-10s %-14s %-22s %10s %10s %10s\n", "ResourceId", "kind", "AllocatedResourceName", "Billed", "Effective", "List")
	n := 0
	for rows.Next() {
		var id, kind, name string
		var billed, eff, list float64
		if err := rows.Scan(&id, &kind, &name, &billed, &eff, &list); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%-10s %-14s %-22s %10.4f %10.4f %10.4f\n", id, kind, name, billed, eff, list)
		n++
	}
	if n == 0 {
		t.Fatal("no allocated charges")
	}
	for _, kind := range Kinds {
		passed, failed := 0, 0
		for _, r := range Run(db, Relations{`main."` + views[kind].Name + `"`, ExportTable, SplitTable, kind == "focus_replaced"}) {
			if r.Failed() {
				failed++
				fmt.Fprintf(&b, "FAILED %s: %s\n", r.ID, r.Says)
			} else {
				passed++
			}
		}
		fmt.Fprintf(&b, "%s: %d FOCUS 1.3 checks passed, %d failed\n", views[kind].Name, passed, failed)
		if failed > 0 {
			t.Fail()
		}
	}
	t.Log(b.String())
}
