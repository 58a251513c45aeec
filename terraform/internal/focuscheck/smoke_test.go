package focuscheck

import "testing"

func TestSmoke(t *testing.T) {
	db, views := open(t, CanonicalSplit(), CanonicalFocus())
	rows, err := db.Query(`SELECT ResourceId, ChargePeriodStart, BilledCost, EffectiveCost, AllocatedResourceId, AllocatedResourceName, AllocatedMethodDetails, AllocatedTags FROM main."` + views["focus"].Name + `" ORDER BY 1, 2, 5`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, e, f, g, h any
		var b, c, d any
		rows.Scan(&a, &b, &c, &d, &e, &f, &g, &h)
		t.Log(a, b, c, d, e, f, g, h)
	}
	var n int
	var s1, s2 float64
	db.QueryRow(`SELECT count(*), sum(BilledCost) FROM main."` + views["focus_replaced"].Name + `"`).Scan(&n, &s1)
	db.QueryRow(`SELECT sum(BilledCost) FROM focusexport.focus`).Scan(&s2)
	t.Log(n, s1, s2)
}
