package pqcheck

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Conforms reports every way the file's schema differs from want: the
// columns must be exactly want's, flat, in the same order, with the
// contract's physical and logical types (CONTRACT §4):
//
//	string    BYTE_ARRAY, logical STRING
//	double    DOUBLE, no logical type
//	timestamp INT64, logical TIMESTAMP(unit=MILLIS, isAdjustedToUTC=true)
//
// Repetition is not checked: pyarrow writes optional columns, this
// project's writer required ones, and Athena reads both.
func Conforms(f *File, want []schema.Column) error {
	var errs []error
	if len(f.Columns) != len(want) {
		errs = append(errs, fmt.Errorf("%d columns, want %d", len(f.Columns), len(want)))
	}
	for i := range min(len(f.Columns), len(want)) {
		got, w := f.Columns[i], want[i]
		if got.Name != w.Name {
			errs = append(errs, fmt.Errorf("column %d is %q, want %q", i, got.Name, w.Name))
			continue
		}
		if err := conformsType(got, w); err != nil {
			errs = append(errs, fmt.Errorf("column %q: %w", got.Name, err))
		}
	}
	for i := len(want); i < len(f.Columns); i++ {
		errs = append(errs, fmt.Errorf("unexpected column %d %q", i, f.Columns[i].Name))
	}
	for i := len(f.Columns); i < len(want); i++ {
		errs = append(errs, fmt.Errorf("missing column %d %q", i, want[i].Name))
	}
	return errors.Join(errs...)
}

func conformsType(c Column, col schema.Column) error {
	t := col.Type
	if t != schema.String && t != schema.Double && t != schema.Timestamp {
		// An appended column (schema version 2): nullable, maybe nested.
		if c.Repetition != "optional" {
			return fmt.Errorf("is %s, want optional", c.Repetition)
		}
		if t == schema.NullableDouble && (!c.Leaf || c.Physical != "DOUBLE") {
			return fmt.Errorf("is %s, want an optional DOUBLE leaf", c.Physical)
		}
		return arrowType(c.Arrow, col)
	}
	if !c.Leaf {
		return errors.New("is a group, want a flat leaf column")
	}
	switch t {
	case schema.String:
		if c.Physical != "BYTE_ARRAY" || !c.String {
			return fmt.Errorf("is %s %s, want BYTE_ARRAY String", c.Physical, c.Logical)
		}
	case schema.Double:
		if c.Physical != "DOUBLE" || c.Logical != "None" {
			return fmt.Errorf("is %s %s, want DOUBLE", c.Physical, c.Logical)
		}
	case schema.Timestamp:
		if c.Physical != "INT64" || !c.Timestamp || c.TimeUnit != "ms" || !c.AdjustedToUTC {
			return fmt.Errorf("is %s %s, want INT64 Timestamp(ms, isAdjustedToUTC=true)", c.Physical, c.Logical)
		}
	default:
		return fmt.Errorf("unknown contract type %v", t)
	}
	return nil
}

// Check opens the Parquet file b with arrow-go, fails t unless its schema
// conforms to p's columns, and returns it; the file is closed when the
// test ends.
func Check(t testing.TB, b []byte, p *schema.Projection) *File {
	t.Helper()
	f, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := Conforms(f, p.Columns()); err != nil {
		t.Fatalf("parquet schema does not follow the contract:\n%v", err)
	}
	return f
}
