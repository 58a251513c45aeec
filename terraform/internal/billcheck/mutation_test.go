//go:build cgo

package billcheck_test

import (
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// splitMutations are wrong versions of the split's SQL, each a rule the
// issue names (or one next to it): each must make the views differ from
// exporter/split's computation, or the tests could not tell it apart.
var splitMutations = []struct {
	name, kind, old, new string
}{
	{"split by CPU alone", "split_daily",
		`(("cpucost" + "cpucostadjustment") + ("ramcost" + "ramcostadjustment") + ("gpucost" + "gpucostadjustment")) AS compute`,
		`("cpucost" + "cpucostadjustment") AS compute`},
	{"idle folded into pods", "split_daily", "SUM(compute) AS compute", "SUM(CASE WHEN is_idle THEN 0E0 ELSE compute END) AS compute"},
	{"negations counted", "split_daily", "WHEN line_item_line_item_type = 'SavingsPlanNegation' THEN 0E0", "WHEN FALSE THEN 0E0"},
	{"negation's public cost counted", "split_daily", "COALESCE(line_item_line_item_type, '') <> 'SavingsPlanNegation'", "TRUE"},
	{"volume cost given to the node (left out of the claims' split)", "split_daily",
		"JOIN volumes v ON v.account_id = a.account_id", "JOIN volumes v ON FALSE AND v.account_id = a.account_id"},
	{"volume split equally, not by PV cost", "split_daily", "ELSE a.cost / v.cost END", "ELSE 1E0 / v.n END"},
	{"data transfer by compute, not network", "split_daily", "WHEN nd.network <> 0E0 THEN a.network / nd.network ", ""},
	{"Savings Plan hours at unblended cost", "split_daily",
		"WHEN line_item_line_item_type = 'SavingsPlanCoveredUsage' THEN savings_plan_savings_plan_effective_cost", "WHEN FALSE THEN 0E0"},
	{"RI hours at unblended cost", "split_daily", "THEN reservation_effective_cost", "THEN line_item_unblended_cost"},
	{"bill-only instances dropped", "split_daily", "WHERE r.resource_kind IN ('instance', 'data_transfer')", "WHERE FALSE AND r.resource_kind IN ('instance', 'data_transfer')"},
	{"bill-only volumes dropped", "split_daily", "WHERE r.resource_kind = 'volume'", "WHERE FALSE AND r.resource_kind = 'volume'"},
	{"idle spread where SCAD is off too", "namespace_daily", "CASE WHEN o.cluster_arn IS NULL THEN 0E0 ELSE coalesce(sp.idle_spread, 0E0) END", "coalesce(sp.idle_spread, 0E0)"},
	{"list-priced rows mixed into the steps", "namespace_daily", "SUM(CASE WHEN price_basis = 'bill' THEN kubecost_cost ELSE 0E0 END)", "SUM(kubecost_cost)"},
}

// TestSplitMutationsKilled creates the views with each mutation and wants
// the comparison with exporter/split (row by row for split_daily, step by
// step for namespace_daily) to find a difference.
func TestSplitMutationsKilled(t *testing.T) {
	kc, rows := archiveRows(), curfixture.Canonical()
	wantRows, steps := expectSplit(t, kc, rows)
	wantSplit, wantNS := goSplit(wantRows), expectNamespaces(kc, rows, steps)
	for _, m := range splitMutations {
		t.Run(m.name, func(t *testing.T) {
			applied := false
			db := openViewsWith(t, kc, rows, func(kind, sql string) string {
				if kind != m.kind || !strings.Contains(sql, m.old) {
					return sql
				}
				applied = true
				return strings.ReplaceAll(sql, m.old, m.new)
			})
			if !applied {
				t.Fatalf("the mutation no longer applies: %q is not in %s", m.old, m.kind)
			}
			diffs := diffSplit(querySplit(t, db), wantSplit)
			diffs = append(diffs, diffRows("namespace_daily", query(t, db, "kubecost_bill_namespace_daily", "cluster_arn", "namespace", "usage_date"), wantNS)...)
			if len(diffs) == 0 {
				t.Errorf("mutation %q survived: the views still equal exporter/split", m.name)
			} else {
				t.Logf("killed: %d differences, e.g. %s", len(diffs), diffs[0])
			}
		})
	}
}
