package focuscheck

import (
	"fmt"
	"strings"
	"testing"
)

// TestViewMutantsAreKilled makes one change to the rendered views' SQL
// at a time, as a slip in gen/focussql.go would, and shows that a check
// fails.
func TestViewMutantsAreKilled(t *testing.T) {
	db, views := open(t, CanonicalSplit(), CanonicalFocus())
	cases := []struct {
		name, kind, from, to, rule string
	}{
		{"costs not split", "focus", "o.BilledCost * w.share", "o.BilledCost", "DataGeneratorCalculatedSplitCostAllocationHandling-A-003-M"},
		{"quantity not split", "focus", "o.PricingQuantity * w.share", "o.PricingQuantity", "CAU-ListCost-C-011-C"},
		{"idle given a resource", "focus", "CASE WHEN w.is_idle THEN NULL ELSE w.cluster_arn", "CASE WHEN false THEN NULL ELSE w.cluster_arn", "CAU-AllocatedResourceId-C-005-C"},
		{"unit price split", "focus", "o.ListUnitPrice AS", "o.ListUnitPrice * w.share AS", "DataGeneratorCalculatedSplitCostAllocationHandling-A-004-M"},
		{"kinds not matched", "focus", "END) = w.resource_kind", "END) IS NOT NULL OR true", "DataGeneratorCalculatedSplitCostAllocationHandling-A-003-M"},
		{"shares not checked", "focus", "HAVING abs(SUM(share) - 1) <= 1e-9", "HAVING true", "DataGeneratorCalculatedSplitCostAllocationHandling-A-003-M"},
		{"origin kept beside its allocation", "focus_replaced", "WHERE m.resource_id IS NULL", "WHERE true", "replaced-total"},
		{"workload named by its kind", "focus", "THEN controller ELSE pod END", "THEN controller_kind ELSE pod END", "CAU-AllocatedResourceId-C-002-M"},
		{"tags dropped", "focus", "o.Tags AS", "CAST(NULL AS MAP(VARCHAR, VARCHAR)) AS", "DataGeneratorCalculatedSplitCostAllocationHandling-A-005-M"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			focus, replaced := fmt.Sprintf("m%d_focus", i), fmt.Sprintf("m%d_focus_replaced", i)
			sqlOf := func(kind string) string {
				s := strings.ReplaceAll(views[kind].SQL, `"`+views["focus"].Name+`"`, `"`+focus+`"`)
				if kind != c.kind {
					return s
				}
				if !strings.Contains(s, c.from) {
					t.Fatalf("%s SQL lacks %q", kind, c.from)
				}
				return strings.ReplaceAll(s, c.from, c.to)
			}
			exec(t, db, fmt.Sprintf("CREATE VIEW main.%q AS\n%s", focus, sqlOf("focus")),
				fmt.Sprintf("CREATE VIEW main.%q AS\n%s", replaced, sqlOf("focus_replaced")))
			failed := false
			for _, kind := range Kinds {
				rel := map[string]string{"focus": focus, "focus_replaced": replaced}[kind]
				for _, r := range Run(db, Relations{`main."` + rel + `"`, ExportTable, SplitTable, kind == "focus_replaced"}) {
					failed = failed || (r.ID == c.rule && r.Failed())
				}
			}
			if !failed {
				t.Errorf("mutant %q survived: %s did not fail", c.name, c.rule)
			}
		})
	}
}
