package bill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Reader is what reading an export needs of an object store.
type Reader = exporter.Reader

// Options select what Read reads.
type Options struct {
	Store Reader
	// Prefix: every .../BILLING_PERIOD=YYYY-MM/....parquet key under it is read. The Data
	// Export must overwrite its files, as the Cloud Intelligence Dashboards' exports do, or a
	// period's old versions are read too.
	Prefix string
	// From and To are inclusive UTC days, zero is open. Billing periods and row groups (by
	// their start date statistics) wholly outside are skipped, lines outside not summed.
	From, To time.Time
	TempDir  string // where objects without random access are spooled
	Logger   *slog.Logger
}

// Read sums the pod lines of an export (see Aggregator).
func Read(ctx context.Context, o Options) (*Summary, error) {
	if o.Store == nil {
		return nil, errors.New("cur: no store to read the export from")
	}
	if !o.From.IsZero() && !o.To.IsZero() && o.To.Before(o.From) {
		return nil, fmt.Errorf("cur: to %s is before from %s", o.To.Format(time.DateOnly), o.From.Format(time.DateOnly))
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var keys []string
	var listed, periods int
	err := o.Store.List(ctx, o.Prefix, "", func(oi exporter.ObjectInfo) error {
		listed++
		period, ok := BillingPeriod(oi.Key)
		if !ok || !strings.HasSuffix(oi.Key, ".parquet") {
			return nil
		}
		periods++
		if o.periodInRange(period) {
			keys = append(keys, oi.Key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cur: list %q: %w", o.Prefix, err)
	}
	if periods == 0 {
		// An empty bill would show every namespace as Kubecost's only, which reads as a
		// finding; a wrong location is likelier.
		return nil, &NoExportError{Prefix: o.Prefix, Objects: listed}
	}
	a := NewAggregator(o.From, o.To)
	for _, key := range keys {
		obj, err := exporter.OpenAt(ctx, o.Store, key, o.TempDir, "kubecost-s3-exporter-cur-*.parquet")
		if err != nil {
			return nil, fmt.Errorf("cur: open %s: %w", key, err)
		}
		a.sum.Stats.BytesSpooled += obj.Spooled
		err = a.ReadFile(ctx, obj, obj.Size)
		obj.Close()
		if err != nil {
			return nil, fmt.Errorf("cur: read %s: %w", key, err)
		}
		log.Debug("cur: read", "key", key, "size", obj.Size)
	}
	return a.Summary(), nil
}

// NoExportError: no Parquet file in a BILLING_PERIOD= folder, so not (yet) a CUR 2.0 export.
type NoExportError struct {
	Prefix  string
	Objects int // objects found under Prefix, of any name
}

func (e *NoExportError) Error() string {
	where := "the location"
	if e.Prefix != "" {
		where = fmt.Sprintf("prefix %q", e.Prefix)
	}
	return fmt.Sprintf("cur: no CUR 2.0 export under %s: expected Parquet files in %sYYYY-MM folders "+
		"(a Data Export writes <prefix>/<export name>/data/%sYYYY-MM/*.parquet), found %d objects and none in such a folder",
		where, billingPeriodPartPrefix, billingPeriodPartPrefix, e.Objects)
}

// BillingPeriod returns the first day of a key's BILLING_PERIOD=YYYY-MM folder.
func BillingPeriod(key string) (time.Time, bool) {
	for part := range strings.SplitSeq(key, "/") {
		if v, ok := strings.CutPrefix(part, billingPeriodPartPrefix); ok {
			t, err := time.Parse(billingPeriodValueLayout, v)
			return t, err == nil
		}
	}
	return time.Time{}, false
}

func (o Options) periodInRange(period time.Time) bool {
	end := period.AddDate(0, 1, -1)
	return (o.From.IsZero() || !end.Before(o.From)) && (o.To.IsZero() || !period.After(o.To))
}

// ErrNotSCAD is returned for a Parquet file without the columns of a CUR 2.0 export with SCAD.
var ErrNotSCAD = errors.New("not a CUR 2.0 export with split cost allocation data (INCLUDE_SPLIT_COST_ALLOCATION_DATA)")

// requiredColumns are those without which no line can be read; others read null when absent.
var requiredColumns = []string{ColOperation, ColUsageType, ColResourceID, ColUsageStart, ColSplitCost}

// ReadFile sums the pod lines of one CUR 2.0 Parquet file (see the package doc's Memory).
func (a *Aggregator) ReadFile(ctx context.Context, ra io.ReaderAt, size int64) error {
	pf, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return err
	}
	cols, err := a.layout(pf)
	if err != nil {
		return err
	}
	a.sum.Stats.Files++
	for _, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		a.sum.Stats.RowGroups++
		if a.skip(rg, cols) {
			a.sum.Stats.RowGroupsSkipped++
			continue
		}
		if err := a.readRowGroup(rg, cols); err != nil {
			return err
		}
	}
	return nil
}

// fileColumns are the read columns' indexes in one file (-1 when absent) and its date decoder.
type fileColumns struct {
	idx    map[string]int
	tagKey int // resource_tags' key leaf, -1 when absent
	start  timeDecoder
}

func (a *Aggregator) layout(pf *parquet.File) (fileColumns, error) {
	fc := fileColumns{idx: map[string]int{}, tagKey: -1}
	// A MAP's keys are the leaf <name>.key_value.key (parquet's LogicalTypes.md; older
	// writers name the group "map").
	for _, g := range []string{"key_value", "map"} {
		if leaf, ok := pf.Schema().Lookup(ColResourceTags, g, "key"); ok && leaf.Node.Type().Kind() == parquet.ByteArray {
			fc.tagKey = leaf.ColumnIndex
			break
		}
	}
	for _, name := range ReadColumns() {
		leaf, ok := pf.Schema().Lookup(name)
		if !ok || leaf.MaxRepetitionLevel > 0 {
			fc.idx[name] = -1
			continue
		}
		fc.idx[name] = leaf.ColumnIndex
		if name == ColUsageStart {
			d, err := newTimeDecoder(leaf.Node)
			if err != nil {
				return fc, fmt.Errorf("%s: %w", name, err)
			}
			fc.start = d
		}
	}
	missing := slices.DeleteFunc(slices.Clone(requiredColumns), func(name string) bool { return fc.idx[name] >= 0 })
	if len(missing) > 0 {
		return fc, fmt.Errorf("%w: no %s", ErrNotSCAD, strings.Join(missing, ", "))
	}
	return fc, nil
}

// skip reports whether a row group's start date statistics lie wholly outside the days.
func (a *Aggregator) skip(rg parquet.RowGroup, fc fileColumns) bool {
	if a.from.IsZero() && a.to.IsZero() {
		return false
	}
	type bounded interface {
		Bounds() (min, max parquet.Value, ok bool)
	}
	b, ok := rg.ColumnChunks()[fc.idx[ColUsageStart]].(bounded)
	if !ok {
		a.sum.Stats.RowGroupsUndecided++
		return false
	}
	lo, hi, ok := b.Bounds()
	if !ok || lo.IsNull() || hi.IsNull() {
		a.sum.Stats.RowGroupsUndecided++
		return false
	}
	first, last := exporter.Midnight(fc.start.decode(lo)), exporter.Midnight(fc.start.decode(hi))
	return (!a.from.IsZero() && last.Before(a.from)) || (!a.to.IsZero() && first.After(a.to))
}
