package focuscheck

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestViewsMeetFOCUS13 runs every check on both views over the canonical
// scenario: nothing may fail, and each view holds the charges it should.
func TestViewsMeetFOCUS13(t *testing.T) {
	db, views := open(t, CanonicalSplit(), CanonicalFocus())
	for _, kind := range Kinds {
		rel := `main."` + views[kind].Name + `"`
		for _, r := range Run(db, Relations{rel, ExportTable, SplitTable, kind == "focus_replaced"}) {
			if r.Failed() {
				t.Errorf("%s: %s (%s): %d violations, %v", kind, r.ID, r.Says, r.Violations, r.Err)
			}
		}
	}
	// 3 hours of: i-0aaa (api, whose two pods are one workload, idx,
	// debug and the idle) and its data transfer (api and idx), i-0bbb (auth
	// and the idle), the
	// volume (1), the bill-only instance (1 unallocated row).
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM main."` + views["focus"].Name + `"`).Scan(&n); err != nil || n != 3*(4+2+2+1+1) {
		t.Errorf("focus has %d allocated charges (%v), want %d", n, err, 3*10)
	}
}

// mutation breaks one rule on a copy (table f) of the replaced view.
type mutation struct {
	rule string
	sql  []string
}

func mutations() []mutation {
	auth := " WHERE x_Controller = 'auth'"
	s3 := " WHERE ResourceId = 'arn:aws:s3:::logs-bucket'"
	other := " WHERE ResourceId = 'i-0eee'"
	m := func(rule string, sql ...string) mutation { return mutation{rule, sql} }
	set := func(rule, assign, where string) mutation { return m(rule, "UPDATE f SET "+assign+where) }
	retype := func(rule, col, typ string) mutation {
		return m(rule, fmt.Sprintf("ALTER TABLE f ALTER %s TYPE %s", col, typ))
	}
	return []mutation{
		retype("CAU-BilledCost-C-001-M", "BilledCost", "BIGINT"),
		set("CAU-BilledCost-C-003-M", "BilledCost = NULL", s3),
		set("CAU-BilledCost-C-004-M", "BilledCost = 'NaN'::DOUBLE", s3),
		retype("CAU-EffectiveCost-C-001-M", "EffectiveCost", "BIGINT"),
		set("CAU-EffectiveCost-C-003-M", "EffectiveCost = NULL", s3),
		retype("CAU-ListCost-C-001-M", "ListCost", "BIGINT"),
		set("CAU-ListCost-C-003-M", "ListCost = NULL", s3),
		set("CAU-ListCost-C-011-C", "ListCost = ListCost * 2", other),
		retype("CAU-ContractedCost-C-001-M", "ContractedCost", "BIGINT"),
		set("CAU-ContractedCost-C-003-M", "ContractedCost = NULL", s3),
		set("CAU-ContractedCost-C-011-C", "ContractedCost = ContractedCost * 2", other),
		retype("CAU-ChargeCategory-C-001-M", "ChargeCategory", "BLOB"),
		set("CAU-ChargeCategory-C-002-M", "ChargeCategory = NULL", s3),
		set("CAU-ChargeCategory-C-003-M", "ChargeCategory = 'Refund'", s3),
		retype("CAU-ChargePeriodStart-C-001-M", "ChargePeriodStart", "VARCHAR"),
		set("CAU-ChargePeriodStart-C-003-M", "ChargePeriodStart = NULL", s3),
		set("CAU-BillingAccountId-C-001-M", "BillingAccountId = NULL", s3),
		retype("CAU-BillingAccountId-C-002-M", "BillingAccountId", "BIGINT"),
		retype("CAU-ResourceId-C-001-M", "ResourceId", "BLOB"),
		set("CAU-ResourceId-C-005-C", "ResourceId = NULL", " WHERE x_ResourceKind = 'volume'"),
		retype("CAU-ServiceProviderName-C-001-M", "ServiceProviderName", "BLOB"),
		set("CAU-ServiceProviderName-C-003-M", "ServiceProviderName = NULL", s3),
		retype("CAU-ProviderName-C-001-M", "ProviderName", "BLOB"),
		set("CAU-ProviderName-C-003-M", "ProviderName = NULL", s3),
		retype("InvoiceIssuerName-C-001-M", "InvoiceIssuerName", "BLOB"),
		set("InvoiceIssuerName-C-003-M", "InvoiceIssuerName = NULL", s3),
		retype("CAU-AllocatedResourceId-C-001-M", "AllocatedResourceId", "BLOB"),
		set("CAU-AllocatedResourceId-C-002-M", "AllocatedResourceId = upper(AllocatedResourceId)", auth),
		set("CAU-AllocatedResourceId-C-004-C", "AllocatedResourceId = 'i-0eee/x', AllocatedResourceName = 'x'", other),
		set("CAU-AllocatedResourceId-C-005-C", "AllocatedResourceId = 'idle', AllocatedResourceName = 'idle'", " WHERE x_ControllerKind = '__idle__'"),
		set("CAU-AllocatedResourceId-C-006-C", "AllocatedResourceId = NULL, AllocatedResourceName = NULL", auth),
		retype("CAU-AllocatedMethodDetails-C-001-M", "AllocatedMethodDetails", "BLOB"),
		set("CAU-AllocatedMethodDetails-C-003-M", "AllocatedMethodDetails = '[0.6]'", auth),
		set("CAU-AllocatedMethodDetails-C-005-C", `AllocatedMethodDetails = '{"Elements":[{"AllocatedRatio":1}]}'`, other),
		set("CAU-AllocatedMethodDetails-C-007-C", `AllocatedMethodDetails = '{"Elements":[{"UsageUnit":"CPU"}]}'`, auth),
		set("CAU-AllocatedMethodDetails-C-007-C", `AllocatedMethodDetails = '{"Elements":[]}'`, auth),
		set("CAU-AllocatedMethodDetailsObject-O-000-C", `AllocatedMethodDetails = '{"Elements":[{"AllocatedRatio":0.5}]}'`, auth),
		set("AllocatedMethodId (column page)", "AllocatedMethodId = NULL", auth),
		set("AllocatedMethodId (column page)", "AllocatedMethodId = 'kubecost-s3-exporter/kubecost-cost-share/v1'", other),
		set("AllocatedResourceName (column page)", "AllocatedResourceName = NULL", auth),
		set("AllocatedTags (column page): JSON object", "AllocatedTags = 'team=payments'", auth),
		set("AllocatedTags (column page): null when not split", `AllocatedTags = '{"kubernetes/namespace":"x"}'`, other),
		set("AllocatedTags (column page): not in Tags", `AllocatedTags = '{"kubernetes/team":"x"}', Tags = MAP {'user:team': 'platform', 'kubernetes/team': 'x'}`, auth),
		set("AllocatedTags (column page): prefixed keys", `AllocatedTags = '{"team":"payments"}'`, auth),
		m("DataGeneratorCalculatedSplitCostAllocationHandling-A-001-C", "ALTER TABLE f DROP COLUMN AllocatedTags"),
		set("DataGeneratorCalculatedSplitCostAllocationHandling-A-003-M", "EffectiveCost = EffectiveCost * 1.01", auth),
		set("DataGeneratorCalculatedSplitCostAllocationHandling-A-003-M", "PricingQuantity = PricingQuantity / 0.6, ListCost = ListCost / 0.6, ContractedCost = ContractedCost / 0.6", auth),
		set("DataGeneratorCalculatedSplitCostAllocationHandling-A-004-M", "AvailabilityZone = 'eu-west-1b'", auth),
		set("DataGeneratorCalculatedSplitCostAllocationHandling-A-004-M", "ListUnitPrice = ListUnitPrice * 2, ListCost = ListCost * 2", auth),
		set("DataGeneratorCalculatedSplitCostAllocationHandling-A-005-M", "Tags = MAP {'user:team': 'identity'}", auth),
		set("DataGeneratorCalculatedSplitCostAllocationHandling-A-007-M", "AllocatedMethodId = 'someone-else/v9'", auth),
		m("replaced-total", "DELETE FROM f"+other),
	}
}

// TestBrokenFixturesFail breaks one rule at a time on a copy of the
// replaced view: the check named by that rule must fail. Every check is
// named by at least one case, so none of them is one that cannot fail.
func TestBrokenFixturesFail(t *testing.T) {
	db, views := open(t, CanonicalSplit(), CanonicalFocus())
	replaced := `main."` + views["focus_replaced"].Name + `"`
	covered := map[string]bool{}
	for _, mu := range mutations() {
		covered[mu.rule] = true
		t.Run(mu.rule, func(t *testing.T) {
			exec(t, db, "DROP TABLE IF EXISTS f", "CREATE TABLE f AS SELECT * FROM "+replaced)
			exec(t, db, mu.sql...)
			var fired []string
			found := false
			for _, r := range Run(db, Relations{"f", ExportTable, SplitTable, true}) {
				if r.ID == mu.rule {
					found = true
					if !r.Failed() {
						t.Errorf("%s did not fail after %s", mu.rule, strings.Join(mu.sql, "; "))
					}
				}
				if r.Failed() {
					fired = append(fired, r.ID)
				}
			}
			if !found {
				t.Fatalf("no check is named %q", mu.rule)
			}
			t.Logf("fired: %s", strings.Join(fired, ", "))
		})
	}
	for _, c := range Checks() {
		if !covered[c.ID] {
			t.Errorf("no broken fixture for %s", c.ID)
		}
	}
}

func exec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
