package gen

import (
	"strings"
	"testing"
)

// TestFocusViewsColumns checks that both FOCUS views have the same typed,
// lowercase, unique columns, the FOCUS 1.3 split columns among them, and
// that the SQL reads the split view only through the agreed columns.
func TestFocusViewsColumns(t *testing.T) {
	all := FocusViews()
	if len(all) != 3 || all[0].Name != "focus" || all[1].Name != "focus_replaced" || all[2].Name != FocusOriginCURView {
		t.Fatalf("views %v", all)
	}
	// The origin view has the export's columns, with the names the FOCUS
	// views read from the export (lowercased by Athena).
	if o := all[2]; len(o.Columns) != len(FocusExportColumns()) || !strings.Contains(o.SQL, `FROM "${cur_database}"."${cur_table}"`) {
		t.Errorf("%s: %d columns, export %d; SQL reads the CUR table by the template variables: %v",
			o.Name, len(o.Columns), len(FocusExportColumns()), strings.Contains(o.SQL, "${cur_table}"))
	}
	views := all[:2]
	for _, v := range views {
		seen := map[string]bool{}
		for _, c := range v.Columns {
			if seen[c.Name] || c.Name != strings.ToLower(c.Name) || c.Glue == "" || c.Presto == "" {
				t.Errorf("%s: column %+v duplicated, not lowercase or untyped", v.Name, c)
			}
			seen[c.Name] = true
		}
		for _, want := range []string{"allocatedmethodid", "allocatedmethoddetails", "allocatedresourceid", "allocatedresourcename",
			"allocatedtags", "serviceprovidername", "hostprovidername", "providername", "publishername", "invoiceissuername"} {
			if !seen[want] {
				t.Errorf("%s lacks %s", v.Name, want)
			}
		}
		if len(v.Columns) != len(views[0].Columns) {
			t.Errorf("%s has %d columns, focus %d", v.Name, len(v.Columns), len(views[0].Columns))
		}
	}
	agreed := "account_id region cluster_arn cluster usage_date resource_kind resource_id node namespace controller_kind " +
		"controller pod is_idle share kubecost_cost public_on_demand_cost amortized_cost net_cost price_basis present_in"
	for _, c := range []string{"cluster_arn", "cluster", "usage_date", "resource_kind", "resource_id", "node", "namespace",
		"controller_kind", "controller", "pod", "is_idle", "share", "present_in"} {
		if !strings.Contains(" "+agreed+" ", " "+c+" ") || !strings.Contains(views[0].SQL, c) {
			t.Errorf("split column %s not agreed or not read", c)
		}
	}
}
