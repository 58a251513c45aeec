package curfixture

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// Extra holds CUR 2.0 columns that only some fixtures write (Options.Extra):
// split cost allocation data's usage columns and the Savings Plan columns a
// bill with a plan's fee lines has. The names and types are the data
// dictionary's: split_line_item_*
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-split-line-item.html),
// savings_plan_* (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-savings-plan.html)
// and pricing_term (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2-pricing.html).
// They come after the columns every fixture writes, so the files without
// them keep exactly the columns exporter/bill knows.
type Extra struct {
	// SplitUsage is the pod's allocated vCPU-, GB- or GPU-hours, the
	// larger of its reservation and its use; ReservedUsage and ActualUsage
	// are the two it was taken from.
	SplitUsage, ReservedUsage, ActualUsage *float64
	// SPRate is savings_plan_savings_plan_rate (the plan's commitment
	// columns are Row's: every fixture writes them).
	SPRate      *float64
	PricingTerm string // OnDemand, Spot, or "" (fees)
}

// lineExtra is line followed by the Extra columns (parquet-go writes an
// embedded struct's columns in place).
type lineExtra struct {
	line
	SplitUsage    *float64 `parquet:"split_line_item_split_usage"`
	ReservedUsage *float64 `parquet:"split_line_item_reserved_usage"`
	ActualUsage   *float64 `parquet:"split_line_item_actual_usage"`
	SPRate        *float64 `parquet:"savings_plan_savings_plan_rate"`
	PricingTerm   *string  `parquet:"pricing_term"`
}

func (r *Row) lineExtra() lineExtra {
	out := lineExtra{line: r.line()}
	e := r.Extra
	if e == nil {
		e = &Extra{}
	}
	out.SplitUsage, out.ReservedUsage, out.ActualUsage = e.SplitUsage, e.ReservedUsage, e.ActualUsage
	out.SPRate = e.SPRate
	out.PricingTerm = r.strPtr("pricing_term", e.PricingTerm)
	return out
}

// writeExtra is WriteParquet with the Extra columns.
func writeExtra(w io.Writer, rows []Row, o Options) error {
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Snappy)}
	if o.RowGroupRows > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(o.RowGroupRows))
	}
	pw := parquet.NewGenericWriter[lineExtra](w, opts...)
	buf := make([]lineExtra, 0, 256)
	for i := range rows {
		buf = append(buf, rows[i].lineExtra())
		if len(buf) == cap(buf) || i == len(rows)-1 {
			if _, err := pw.Write(buf); err != nil {
				return fmt.Errorf("curfixture: write: %w", err)
			}
			buf = buf[:0]
		}
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("curfixture: close: %w", err)
	}
	return nil
}
