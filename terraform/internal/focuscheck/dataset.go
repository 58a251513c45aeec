package focuscheck

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

// columnsOf lists the export's columns the views carry, by how an
// allocated charge carries them.
func columnsOf(pick func(kind string) bool) []string {
	var out []string
	for _, c := range gen.FocusExportColumns() {
		if pick(c.KindName()) {
			out = append(out, c.Name)
		}
	}
	return out
}

// datasetChecks are the whole-dataset rules of data generator-calculated
// split cost allocation, and the replaced view's totals.
func datasetChecks() []Check {
	sums := columnsOf(func(k string) bool { return k == "sum" })
	keys := strings.Split(originKey, ", ")
	var same []string
	for _, c := range columnsOf(func(k string) bool { return k != "sum" }) {
		if c != "Tags" && !containsString(keys, c) {
			same = append(same, fmt.Sprintf("a.%s IS DISTINCT FROM o.%s", c, c))
		}
	}
	var on []string
	for _, k := range keys {
		on = append(on, fmt.Sprintf("a.%s IS NOT DISTINCT FROM o.%s", k, k))
	}
	join := "FROM (SELECT * FROM $F WHERE " + related + ") a LEFT JOIN $E o ON " + strings.Join(on, " AND ")
	var sumA, sumO, diff, totF, totE, totDiff []string
	for _, c := range sums {
		sumA = append(sumA, fmt.Sprintf("SUM(%s) AS %s", c, c))
		sumO = append(sumO, fmt.Sprintf("SUM(%s) AS o_%s", c, c))
		diff = append(diff, fmt.Sprintf("(a.%s IS NOT NULL AND %s)", c, differs("a."+c, "o.o_"+c)))
		totF = append(totF, fmt.Sprintf("coalesce(SUM(%s), 0) AS %s", c, c))
		totE = append(totE, fmt.Sprintf("coalesce(SUM(%s), 0) AS o_%s", c, c))
		totDiff = append(totDiff, differs("f."+c, "e.o_"+c))
	}
	present := "SELECT 4 - count(*) FROM (DESCRIBE SELECT * FROM $F) WHERE lower(column_name) IN " +
		"('allocatedmethodid', 'allocatedresourceid', 'allocatedresourcename', 'allocatedtags')"
	return []Check{
		{"DataGeneratorCalculatedSplitCostAllocationHandling-A-001-C", "The dataset has AllocatedMethodId, AllocatedResourceId, AllocatedResourceName and the allocated tags column (AllocatedTags; the model names it AllocatedResourceTags).", srcSplit, present, false},
		{"DataGeneratorCalculatedSplitCostAllocationHandling-A-003-M", "The allocated charges of an origin charge sum, in every summable column, to the origin's.", srcSplit,
			"SELECT count(*) FROM (SELECT " + originKey + ", " + strings.Join(sumA, ", ") + " FROM $F WHERE " + related + " GROUP BY " + originKey + ") a " +
				"LEFT JOIN (SELECT " + originKey + ", " + strings.Join(sumO, ", ") + " FROM $E GROUP BY " + originKey + ") o ON " + strings.Join(on, " AND ") +
				" WHERE o.ResourceId IS NULL OR " + strings.Join(diff, " OR "), false},
		{"DataGeneratorCalculatedSplitCostAllocationHandling-A-004-M", "Each allocated charge has its origin charge's dimensions and unit prices.", srcSplit,
			"SELECT count(*) " + join + " WHERE o.ResourceId IS NULL OR " + strings.Join(same, " OR "), false},
		{"DataGeneratorCalculatedSplitCostAllocationHandling-A-005-M", "Each allocated charge has its origin charge's Tags.", srcSplit,
			"SELECT count(*) " + join + " WHERE o.ResourceId IS NULL OR CAST(a.Tags AS VARCHAR) IS DISTINCT FROM CAST(o.Tags AS VARCHAR)", false},
		{"DataGeneratorCalculatedSplitCostAllocationHandling-A-007-M", "Every allocated charge names the method docs/focus.md documents.", srcSplit,
			"SELECT count(*) FROM $F WHERE " + related + " AND AllocatedMethodId IS DISTINCT FROM '" + gen.FocusMethodID + "'", false},
		{"replaced-total", "The replaced view's totals equal the export's, in every summable column, within 1e-9 relative.", "issue 47",
			"SELECT count(*) FROM (SELECT " + strings.Join(totF, ", ") + " FROM $F) f, (SELECT " + strings.Join(totE, ", ") + " FROM $E) e WHERE " +
				strings.Join(totDiff, " OR "), true},
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Checks are every check, column rules first.
func Checks() []Check { return append(columnChecks(), datasetChecks()...) }

// Result is a check's outcome on a dataset. Err is set when the query
// cannot run on it, as when a column is missing or of another type: the
// checks of those rules say so, the others cannot run.
type Result struct {
	Check
	Violations int64
	Err        error
}

// Relations name what the checks read, as SQL relations: the dataset
// checked ($F), the AWS FOCUS export it was made from ($E) and the
// split's row view ($S).
type Relations struct {
	Dataset, Export, Split string
	// Replaced says whether Dataset is a replaced view, whose totals must
	// then be the export's.
	Replaced bool
}

// Run runs the checks on rel.Dataset.
func Run(db *sql.DB, rel Relations) []Result {
	var out []Result
	for _, c := range Checks() {
		if c.Replaced && !rel.Replaced {
			continue
		}
		q := strings.NewReplacer("$F", rel.Dataset, "$E", rel.Export, "$S", rel.Split).Replace(c.SQL)
		r := Result{Check: c}
		if err := db.QueryRow(q).Scan(&r.Violations); err != nil {
			r.Err = fmt.Errorf("focuscheck: %s: %w", c.ID, err)
		}
		out = append(out, r)
	}
	return out
}

// Failed says whether the result breaks its rule: violations, or a query
// that could not run.
func (r Result) Failed() bool { return r.Violations > 0 || r.Err != nil }
