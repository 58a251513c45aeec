package focuscheck

import "strings"

// The Cloud Intelligence Dashboards build their FOCUS dashboard on one
// view, focus_consolidation_view, that unions every FOCUS table their
// helper finds in Athena (aws-solutions-library-samples/
// cloud-intelligence-dashboards-framework, cid/helpers/focus_consolidation.py
// at 9cecc158b81504344cf96b38d5918b6953b2e97d, with
// find_tables_with_columns in cid/helpers/athena.py). Its rule, restated:
// a table is unioned when Athena's table metadata lists it as
// EXTERNAL_TABLE (views, VIRTUAL_VIEW, are skipped), it is not the
// consolidation view itself, and its columns (not its partition keys)
// include every one of 21 minimum FOCUS columns by their lowercase Glue
// names. Every selected table is added with UNION ALL, so two tables
// holding the same charge count it twice.

// FocusMinimumColumns are the consolidation's 21 minimum FOCUS columns.
var FocusMinimumColumns = []string{
	"billedcost", "billingaccountid", "billingcurrency", "billingperiodstart", "chargecategory",
	"chargedescription", "chargeperiodstart", "commitmentdiscountcategory", "commitmentdiscountid",
	"commitmentdiscountname", "effectivecost", "listcost", "listunitprice", "pricingcategory",
	"pricingquantity", "pricingunit", "servicecategory", "servicename", "skuid", "skupriceid",
	"subaccountid",
}

// ConsolidationView is the name of the view the consolidation writes.
const ConsolidationView = "focus_consolidation_view"

// GlueTable is a Glue table as Athena's table metadata lists it.
type GlueTable struct {
	Name      string
	TableType string   // EXTERNAL_TABLE, VIRTUAL_VIEW, ...
	Columns   []string // storage descriptor columns, as Glue stores them
}

// Consolidated says whether the CID FOCUS consolidation would union t.
func Consolidated(t GlueTable) bool {
	if t.TableType != "EXTERNAL_TABLE" || strings.EqualFold(t.Name, ConsolidationView) {
		return false
	}
	have := map[string]bool{}
	for _, c := range t.Columns {
		have[c] = true
	}
	for _, c := range FocusMinimumColumns {
		if !have[c] {
			return false
		}
	}
	return true
}
