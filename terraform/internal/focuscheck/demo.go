package focuscheck

import (
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/billcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

// Demo builds, in db (DuckDB standing in for Athena, one connection), the
// bill module's split views over an archive and a CUR 2.0 export, the FOCUS
// views over them with the CUR's own lines as origin charges
// (the module's origin view, origin = cur), runs every FOCUS 1.3 check on both views and
// prints a few allocated charges and the checks' outcome to w. terraformDir
// holds the modules. It returns the number of checks that failed.
func Demo(w io.Writer, db *sql.DB, terraformDir, archiveDir, exportDir string) (int, error) {
	if _, err := billcheck.CreateViews(db, filepath.Join(terraformDir, gen.BillModuleDir), archiveDir, exportDir); err != nil {
		return 0, err
	}
	// A simulated CUR has no payer, currency or period end columns: each
	// account pays its own bill, in USD, for the calendar month.
	if _, err := db.Exec(`CREATE VIEW cur.cur2_focus AS SELECT *, line_item_usage_account_id AS bill_payer_account_id,
		'USD' AS line_item_currency_code, bill_billing_period_start_date + INTERVAL 1 MONTH AS bill_billing_period_end_date FROM cur.cur2`); err != nil {
		return 0, fmt.Errorf("focuscheck: %w", err)
	}
	views, err := CreateOverCUR(db, filepath.Join(terraformDir, "modules", "bill-focus"), "cur", "cur2_focus")
	if err != nil {
		return 0, err
	}
	focus := `main."` + views["focus"].Name + `"`
	// One instance-day that both sides have, all its allocated charges:
	// the pods' and the node's idle (AllocatedResourceId null).
	rows, err := db.Query(`WITH pick AS (SELECT resource_id, usage_date FROM ` + SplitTable + `
		WHERE present_in = 'both' AND resource_kind = 'instance' ORDER BY usage_date DESC, resource_id LIMIT 1)
	SELECT ResourceId, strftime(min(ChargePeriodStart), '%Y-%m-%d'), coalesce(AllocatedResourceName, '(unallocated: the node''s idle)') AS n,
		AllocatedMethodId, sum(BilledCost), sum(EffectiveCost) AS e FROM ` + focus + ` f
	JOIN pick p ON f.ResourceId = p.resource_id AND CAST(f.ChargePeriodStart AS DATE) = p.usage_date
	GROUP BY ResourceId, n, AllocatedMethodId ORDER BY e DESC, n LIMIT 8`)
	if err != nil {
		return 0, fmt.Errorf("focuscheck: %w", err)
	}
	defer rows.Close()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s, one instance-day's allocated charges, each summed over the day's hourly charges:\nResourceId\tChargePeriodStart\tAllocatedResourceName\tAllocatedMethodId\tBilledCost\tEffectiveCost\n", views["focus"].Name)
	for rows.Next() {
		var id, day, name, method string
		var billed, effective float64
		if err := rows.Scan(&id, &day, &name, &method, &billed, &effective); err != nil {
			return 0, fmt.Errorf("focuscheck: %w", err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.6f\t%.6f\n", id, day, name, method, billed, effective)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("focuscheck: %w", err)
	}
	tw.Flush()
	failed := 0
	for _, kind := range Kinds {
		var ran, bad int
		for _, r := range Run(db, Relations{`main."` + views[kind].Name + `"`, ExportTable, SplitTable, kind == "focus_replaced"}) {
			ran++
			if r.Failed() {
				bad++
				fmt.Fprintf(w, "  %s: %s: %d rows break it %v\n", views[kind].Name, r.ID, r.Violations, r.Err)
			}
		}
		fmt.Fprintf(w, "FOCUS 1.3 requirements on %s: %d checked by rule id, %d hold, %d broken\n", views[kind].Name, ran, ran-bad, bad)
		failed += bad
	}
	return failed, nil
}
