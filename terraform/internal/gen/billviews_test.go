package gen

import (
	"strings"
	"testing"
)

// TestBillViewsReadTheContract shows that the Kubecost side is written
// from the exporter's column contract: a name the contract lacks stops
// generation with an error naming it, and every view's SQL refers to the
// archive only through the view's lowercase contract names.
func TestBillViewsReadTheContract(t *testing.T) {
	if got := kubecostColumn("cpuCostAdjustment"); got != `"cpucostadjustment"` {
		t.Errorf("kubecostColumn = %s", got)
	}
	err := func() (err error) {
		defer func() { err, _ = recover().(error) }()
		kubecostColumn("cpuCosts")
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), `"cpuCosts" is not a column`) {
		t.Errorf("unknown column: %v", err)
	}
	views, err := BillViews()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		seen := map[string]bool{}
		for _, c := range v.Columns {
			if seen[c.Name] || c.Name != strings.ToLower(c.Name) || c.Glue == "" || c.Presto == "" || c.QuickSight == "" {
				t.Errorf("%s: column %+v duplicated, not lowercase or untyped", v.Name, c)
			}
			seen[c.Name] = true
		}
	}
}
