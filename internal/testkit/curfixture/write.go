// Package curfixture writes AWS CUR 2.0 exports with split cost allocation
// data (SCAD) as a Data Export does, for tests and the demo: Parquet files
// whose columns carry the data dictionary's names and types
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2.html:
// strings, doubles, timestamps, and resource_tags and product as
// map<string,string>), under the export's partition folders
// <prefix><export>/data/BILLING_PERIOD=YYYY-MM/<export>-00001.snappy.parquet
// (https://docs.aws.amazon.com/cur/latest/userguide/dataexports-create-standard.html).
//
// Canonical is a small export whose lines cover every case the bill's
// reader must get right, and Expected computes its per cluster, namespace
// and day numbers with plain loops, sharing no code with exporter/bill, so
// that the reader and the SQL views can each be checked against it.
//
// The package does not import exporter/bill on purpose: its column names
// are written here a second time, and the tests compare the two.
package curfixture

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Row is one CUR line. Strings are written as they are ("" stays ""),
// except the columns named in NullStrings, written as null; a nil number
// is null.
type Row struct {
	AccountID        string // line_item_usage_account_id
	LineItemType     string // Usage, DiscountedUsage, SavingsPlanCoveredUsage, ...
	Operation        string // EKSPod-EC2, FargatePod, RunInstances, ...
	ProductCode      string
	UsageType        string
	ResourceID       string
	ParentResourceID string // split_line_item_parent_resource_id
	ReservationARN   string
	SavingsPlanARN   string
	Start, End       time.Time // line_item_usage_start_date/_end_date; zero Start = null
	UsageAmount      float64

	Unblended, NetUnblended, PublicOnDemand    *float64
	SPEffective, SPNetEffective, RIEffective   *float64
	SplitCost, UnusedCost, NetSplit, NetUnused *float64
	PODSplit, PODUnused, SplitUsageRatio       *float64
	Tags, Product                              map[string]string
	// Resource-level lines (instances, volumes, data transfer): the
	// region column, the description, and the reservation and Savings
	// Plan columns of the amortized rule.
	RegionCode, Description                  string
	RINetEffective                           *float64
	RIUnusedUpfront, RIUnusedRecurring       *float64
	RINetUnusedUpfront, RINetUnusedRecurring *float64
	SPTotalCommitment, SPUsedCommitment      *float64
	NullStrings                              []string // column names written as null
	Extra                                    *Extra   // written with Options.Extra (extra.go)
}

// F is a number for Row's nullable fields.
func F(v float64) *float64 { return &v }

// line is the file's row: the dictionary's column names and types, every
// column nullable as in an export. Column order is this struct's.
type line struct {
	BillingPeriodStart *time.Time        `parquet:"bill_billing_period_start_date,timestamp(millisecond)"`
	TimeInterval       *string           `parquet:"identity_time_interval"`
	UsageAccountID     *string           `parquet:"line_item_usage_account_id"`
	LineItemType       *string           `parquet:"line_item_line_item_type"`
	Operation          *string           `parquet:"line_item_operation"`
	ProductCode        *string           `parquet:"line_item_product_code"`
	ResourceID         *string           `parquet:"line_item_resource_id"`
	UsageType          *string           `parquet:"line_item_usage_type"`
	UsageStart         *time.Time        `parquet:"line_item_usage_start_date,timestamp(millisecond)"`
	UsageEnd           *time.Time        `parquet:"line_item_usage_end_date,timestamp(millisecond)"`
	UsageAmount        *float64          `parquet:"line_item_usage_amount"`
	Unblended          *float64          `parquet:"line_item_unblended_cost"`
	NetUnblended       *float64          `parquet:"line_item_net_unblended_cost"`
	PublicOnDemand     *float64          `parquet:"pricing_public_on_demand_cost"`
	ReservationARN     *string           `parquet:"reservation_reservation_a_r_n"`
	RIEffective        *float64          `parquet:"reservation_effective_cost"`
	SavingsPlanARN     *string           `parquet:"savings_plan_savings_plan_a_r_n"`
	SPEffective        *float64          `parquet:"savings_plan_savings_plan_effective_cost"`
	SPNetEffective     *float64          `parquet:"savings_plan_net_savings_plan_effective_cost"`
	ParentResourceID   *string           `parquet:"split_line_item_parent_resource_id"`
	SplitUsageRatio    *float64          `parquet:"split_line_item_split_usage_ratio"`
	SplitCost          *float64          `parquet:"split_line_item_split_cost"`
	UnusedCost         *float64          `parquet:"split_line_item_unused_cost"`
	NetSplit           *float64          `parquet:"split_line_item_net_split_cost"`
	NetUnused          *float64          `parquet:"split_line_item_net_unused_cost"`
	PODSplit           *float64          `parquet:"split_line_item_public_on_demand_split_cost"`
	PODUnused          *float64          `parquet:"split_line_item_public_on_demand_unused_cost"`
	ResourceTags       map[string]string `parquet:"resource_tags,optional"`
	Product            map[string]string `parquet:"product,optional"`
	Description        *string           `parquet:"line_item_line_item_description"`
	RegionCode         *string           `parquet:"product_region_code"`
	RINetEffective     *float64          `parquet:"reservation_net_effective_cost"`
	RIUnusedUpfront    *float64          `parquet:"reservation_unused_amortized_upfront_fee_for_billing_period"`
	RIUnusedRecurring  *float64          `parquet:"reservation_unused_recurring_fee"`
	RINetUnusedUp      *float64          `parquet:"reservation_net_unused_amortized_upfront_fee_for_billing_period"`
	RINetUnusedRec     *float64          `parquet:"reservation_net_unused_recurring_fee"`
	SPTotalCommitment  *float64          `parquet:"savings_plan_total_commitment_to_date"`
	SPUsedCommitment   *float64          `parquet:"savings_plan_used_commitment"`
}

func (r *Row) strPtr(name, v string) *string {
	if slices.Contains(r.NullStrings, name) {
		return nil
	}
	return &v
}

func (r *Row) line() line {
	var start, end, period *time.Time
	if !r.Start.IsZero() {
		s := r.Start.UTC()
		p := time.Date(s.Year(), s.Month(), 1, 0, 0, 0, 0, time.UTC)
		start, period = &s, &p
	}
	if !r.End.IsZero() {
		e := r.End.UTC()
		end = &e
	}
	interval := ""
	if start != nil && end != nil {
		interval = start.Format(time.RFC3339) + "/" + end.Format(time.RFC3339)
	}
	amount := r.UsageAmount
	return line{
		BillingPeriodStart: period, TimeInterval: r.strPtr("identity_time_interval", interval),
		UsageAccountID: r.strPtr("line_item_usage_account_id", r.AccountID),
		LineItemType:   r.strPtr("line_item_line_item_type", r.LineItemType),
		Operation:      r.strPtr("line_item_operation", r.Operation),
		ProductCode:    r.strPtr("line_item_product_code", r.ProductCode),
		ResourceID:     r.strPtr("line_item_resource_id", r.ResourceID),
		UsageType:      r.strPtr("line_item_usage_type", r.UsageType),
		UsageStart:     start, UsageEnd: end, UsageAmount: &amount,
		Unblended: r.Unblended, NetUnblended: r.NetUnblended, PublicOnDemand: r.PublicOnDemand,
		ReservationARN: r.strPtr("reservation_reservation_a_r_n", r.ReservationARN), RIEffective: r.RIEffective,
		SavingsPlanARN: r.strPtr("savings_plan_savings_plan_a_r_n", r.SavingsPlanARN),
		SPEffective:    r.SPEffective, SPNetEffective: r.SPNetEffective,
		ParentResourceID: r.strPtr("split_line_item_parent_resource_id", r.ParentResourceID),
		SplitUsageRatio:  r.SplitUsageRatio, SplitCost: r.SplitCost, UnusedCost: r.UnusedCost,
		NetSplit: r.NetSplit, NetUnused: r.NetUnused, PODSplit: r.PODSplit, PODUnused: r.PODUnused,
		ResourceTags: r.Tags, Product: r.Product,
		Description: r.strPtr("line_item_line_item_description", r.Description),
		RegionCode:  r.strPtr("product_region_code", r.RegionCode), RINetEffective: r.RINetEffective,
		RIUnusedUpfront: r.RIUnusedUpfront, RIUnusedRecurring: r.RIUnusedRecurring,
		RINetUnusedUp: r.RINetUnusedUpfront, RINetUnusedRec: r.RINetUnusedRecurring,
		SPTotalCommitment: r.SPTotalCommitment, SPUsedCommitment: r.SPUsedCommitment,
	}
}

// Options shape the files.
type Options struct {
	// RowGroupRows is the most lines per row group; 0 = one row group per
	// file. Rows are written sorted by start, so row groups cover
	// successive hours and their statistics can be used to skip them.
	RowGroupRows int64
	// Extra adds the columns of Extra (extra.go) after the others.
	Extra bool
}

// WriteParquet writes rows as one CUR 2.0 Parquet file (snappy, as Data
// Exports compress Parquet), in their order.
func WriteParquet(w io.Writer, rows []Row, o Options) error {
	if o.Extra {
		return writeExtra(w, rows, o)
	}
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Snappy)}
	if o.RowGroupRows > 0 {
		opts = append(opts, parquet.MaxRowsPerRowGroup(o.RowGroupRows))
	}
	pw := parquet.NewGenericWriter[line](w, opts...)
	buf := make([]line, 0, 256)
	flush := func() error {
		_, err := pw.Write(buf)
		buf = buf[:0]
		return err
	}
	for i := range rows {
		buf = append(buf, rows[i].line())
		if len(buf) == cap(buf) {
			if err := flush(); err != nil {
				return fmt.Errorf("curfixture: write: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("curfixture: write: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("curfixture: close: %w", err)
	}
	return nil
}

// Key is where a Data Export puts the first file of a billing period:
// <export>/data/BILLING_PERIOD=YYYY-MM/<export>-00001.snappy.parquet
// (relative to the export's S3 prefix).
func Key(export string, period time.Time) string {
	return fmt.Sprintf("%s/data/BILLING_PERIOD=%s/%s-00001.snappy.parquet", export, period.UTC().Format("2006-01"), export)
}

// WriteExport writes rows under dir as a Data Export named export does:
// one file per billing period (the month of each line's start, UTC; lines
// without a start go to the earliest period), rows sorted by start. It
// returns the keys written, relative to dir, sorted.
func WriteExport(dir, export string, rows []Row, o Options) ([]string, error) {
	byPeriod := map[time.Time][]Row{}
	var first time.Time
	for _, r := range rows {
		if r.Start.IsZero() {
			continue
		}
		s := r.Start.UTC()
		p := time.Date(s.Year(), s.Month(), 1, 0, 0, 0, 0, time.UTC)
		if first.IsZero() || p.Before(first) {
			first = p
		}
		byPeriod[p] = append(byPeriod[p], r)
	}
	for _, r := range rows {
		if r.Start.IsZero() {
			byPeriod[first] = append(byPeriod[first], r)
		}
	}
	var keys []string
	for p, rs := range byPeriod {
		slices.SortStableFunc(rs, func(a, b Row) int { return a.Start.Compare(b.Start) })
		key := Key(export, p)
		path := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("curfixture: %w", err)
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("curfixture: %w", err)
		}
		err = WriteParquet(f, rs, o)
		err = cmp.Or(err, f.Close())
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys, nil
}
