package gen

import (
	"encoding/json"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

// billSummarySQL sums the pod lines of a CUR 2.0 table per account,
// region, cluster, namespace and UTC day by exporter/bill's rules, the one
// definition the report's Go reader also follows.
func billSummarySQL(table string) string { return bill.SummarySQL(table) }

// CURColumnsPath is the bill-export module's column list.
const CURColumnsPath = "modules/bill-export/columns.json"

// curColumnsJSON lists the CUR 2.0 columns the export selects and its Glue
// table declares: exporter/bill's column table, with the data dictionary's
// names and Glue types.
func curColumnsJSON() ([]byte, error) {
	type c struct {
		Name string `json:"name"`
		Glue string `json:"glue"`
		Doc  string `json:"doc"`
	}
	var cols []c
	for _, x := range bill.Columns() {
		cols = append(cols, c{x.Name, x.Athena, x.Doc})
	}
	b, err := json.MarshalIndent(map[string]any{"columns": cols}, "", "  ")
	return append(b, '\n'), err
}
