// Package pqcheck reads Parquet files for tests with Apache arrow-go, a
// reader that shares no code with the writer (parquet-go). A file that
// pqcheck accepts has been decoded by a second implementation, the way
// Athena, Glue and pyarrow will decode it.
package pqcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
)

// Column is one top-level field of the file schema, as written in the footer.
type Column struct {
	Name string
	// Leaf is false when the field is a group, i.e. the file is nested
	// where the contract wants flat columns.
	Leaf bool
	// Physical is the physical type: "BYTE_ARRAY", "DOUBLE", "INT64"...
	Physical string
	// Logical is arrow-go's rendering of the logical type, e.g. "String" or
	// "Timestamp(isAdjustedToUTC=true, timeUnit=milliseconds, ...)"; "None"
	// when there is none.
	Logical string
	// Converted is the legacy converted type: "UTF8", "TIMESTAMP_MILLIS",
	// "NONE"...
	Converted string
	// Repetition is "required", "optional" or "repeated".
	Repetition string
	// String is true for the STRING logical type.
	String bool
	// Timestamp is true for the TIMESTAMP logical type; TimeUnit ("ms",
	// "us", "ns") and AdjustedToUTC describe it.
	Timestamp     bool
	TimeUnit      string
	AdjustedToUTC bool
	// Codecs and Encodings are the distinct compression codecs ("SNAPPY",
	// "ZSTD", "GZIP"...) and encodings of the column's chunks, in the order
	// first seen.
	Codecs    []string
	Encodings []string
	// Dictionary is true when any chunk of the column has a dictionary page.
	Dictionary bool
	// Arrow is the Arrow type pqarrow reads the column as, e.g.
	// map<utf8, utf8> for a MAP of strings.
	Arrow arrow.DataType
}

// File is an opened Parquet file and what its footer says.
type File struct {
	Columns   []Column
	NumRows   int64
	RowGroups []int64 // rows per row group, in file order
	KeyValue  map[string]string
	CreatedBy string

	rdr    *file.Reader
	index  map[string]int   // column name -> leaf index
	leaves map[string][]int // top-level column name -> its leaf indexes
}

// OpenBytes opens an in-memory Parquet file.
func OpenBytes(b []byte) (*File, error) { return Open(bytes.NewReader(b), int64(len(b))) }

// Open reads the footer of the Parquet file in r[0:size].
func Open(r io.ReaderAt, size int64) (*File, error) {
	rdr, err := file.NewParquetReader(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, fmt.Errorf("pqcheck: open: %w", err)
	}
	f, err := inspect(rdr)
	if err != nil {
		rdr.Close()
		return nil, err
	}
	return f, nil
}

func inspect(rdr *file.Reader) (*File, error) {
	md := rdr.MetaData()
	f := &File{
		NumRows:   rdr.NumRows(),
		KeyValue:  map[string]string{},
		CreatedBy: md.GetCreatedBy(),
		rdr:       rdr,
		index:     map[string]int{},
		leaves:    map[string][]int{},
	}
	for _, kv := range md.KeyValueMetadata() {
		if kv.Value != nil {
			f.KeyValue[kv.Key] = *kv.Value
		} else {
			f.KeyValue[kv.Key] = ""
		}
	}
	root := md.Schema.Root()
	as, err := pqarrow.FromParquet(md.Schema, nil, md.KeyValueMetadata())
	if err != nil {
		return nil, fmt.Errorf("pqcheck: arrow schema: %w", err)
	}
	for i := range root.NumFields() {
		c := describe(root.Field(i))
		c.Arrow = as.Field(i).Type
		f.Columns = append(f.Columns, c)
	}
	for i := range md.Schema.NumColumns() {
		r := md.Schema.ColumnRoot(i).Name()
		f.leaves[r] = append(f.leaves[r], i)
		// A leaf's name alone is ambiguous in a nested file, but index only
		// serves the value readers, which refuse nested files anyway.
		f.index[md.Schema.Column(i).Name()] = i
	}
	byName := make(map[string]*Column, len(f.Columns))
	for i := range f.Columns {
		byName[f.Columns[i].Name] = &f.Columns[i]
	}
	for g := range rdr.NumRowGroups() {
		rg := md.RowGroup(g)
		f.RowGroups = append(f.RowGroups, rg.NumRows())
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return nil, fmt.Errorf("pqcheck: row group %d column %d: %w", g, c, err)
			}
			// A nested column's chunks are those of its leaves.
			col := byName[md.Schema.ColumnRoot(c).Name()]
			if col == nil {
				continue
			}
			col.Codecs = addUnique(col.Codecs, cc.Compression().String())
			for _, e := range cc.Encodings() {
				col.Encodings = addUnique(col.Encodings, e.String())
			}
			col.Dictionary = col.Dictionary || cc.HasDictionaryPage()
		}
	}
	return f, nil
}

func describe(n pqschema.Node) Column {
	c := Column{
		Name:       n.Name(),
		Leaf:       n.Type() == pqschema.Primitive,
		Physical:   "GROUP",
		Logical:    "None",
		Converted:  n.ConvertedType().String(),
		Repetition: n.RepetitionType().String(),
	}
	if lt := n.LogicalType(); lt != nil {
		c.Logical = lt.String()
		switch t := lt.(type) {
		case pqschema.StringLogicalType:
			c.String = true
		case *pqschema.TimestampLogicalType:
			c.Timestamp, c.AdjustedToUTC, c.TimeUnit = true, t.IsAdjustedToUTC(), unitName(t.TimeUnit())
		case pqschema.TimestampLogicalType:
			c.Timestamp, c.AdjustedToUTC, c.TimeUnit = true, t.IsAdjustedToUTC(), unitName(t.TimeUnit())
		}
	}
	if p, ok := n.(*pqschema.PrimitiveNode); ok {
		c.Physical = p.PhysicalType().String()
	}
	return c
}

func unitName(u pqschema.TimeUnitType) string {
	switch u {
	case pqschema.TimeUnitMillis:
		return "ms"
	case pqschema.TimeUnitMicros:
		return "us"
	case pqschema.TimeUnitNanos:
		return "ns"
	}
	return "unknown"
}

func addUnique(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// Close releases the file.
func (f *File) Close() error { return f.rdr.Close() }

// Names returns the top-level column names in file order.
func (f *File) Names() []string {
	names := make([]string, len(f.Columns))
	for i, c := range f.Columns {
		names[i] = c.Name
	}
	return names
}

// Column returns the named top-level column.
func (f *File) Column(name string) (Column, bool) {
	for _, c := range f.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Codecs returns the distinct codecs of every column chunk in the file.
func (f *File) Codecs() []string {
	var out []string
	for _, c := range f.Columns {
		for _, k := range c.Codecs {
			out = addUnique(out, k)
		}
	}
	return out
}

// Row gives typed access to one row of a Scan. Index i refers to the
// position of the column in the names passed to Scan.
type Row struct {
	rec arrow.RecordBatch
	row int
}

// IsNull reports whether column i is null in this row.
func (r Row) IsNull(i int) bool { return r.rec.Column(i).IsNull(r.row) }

// String returns column i as a string; it panics on a non-string column.
func (r Row) String(i int) string {
	switch a := r.rec.Column(i).(type) {
	case *array.String:
		return a.Value(r.row)
	case *array.LargeString:
		return a.Value(r.row)
	case *array.Binary:
		return string(a.Value(r.row))
	}
	panic(fmt.Sprintf("pqcheck: column %s is %s, not a string", r.rec.ColumnName(i), r.rec.Column(i).DataType()))
}

// Double returns column i as a float64; it panics on a non-double column.
func (r Row) Double(i int) float64 {
	if a, ok := r.rec.Column(i).(*array.Float64); ok {
		return a.Value(r.row)
	}
	panic(fmt.Sprintf("pqcheck: column %s is %s, not a double", r.rec.ColumnName(i), r.rec.Column(i).DataType()))
}

// TimestampMillis returns column i, a timestamp of any unit, in Unix
// milliseconds; it panics on a non-timestamp column.
func (r Row) TimestampMillis(i int) int64 {
	a, ok := r.rec.Column(i).(*array.Timestamp)
	if !ok {
		panic(fmt.Sprintf("pqcheck: column %s is %s, not a timestamp", r.rec.ColumnName(i), r.rec.Column(i).DataType()))
	}
	v := int64(a.Value(r.row))
	switch a.DataType().(*arrow.TimestampType).Unit {
	case arrow.Second:
		return v * 1000
	case arrow.Microsecond:
		return v / 1000
	case arrow.Nanosecond:
		return v / 1_000_000
	}
	return v
}

// TimeZone returns the Arrow time zone pqarrow gave timestamp column i:
// "UTC" for a TIMESTAMP(isAdjustedToUTC=true), "" otherwise.
func (r Row) TimeZone(i int) string {
	if t, ok := r.rec.Column(i).DataType().(*arrow.TimestampType); ok {
		return t.TimeZone
	}
	return ""
}

// Scan calls fn for every row, in file order, with the named columns
// decoded by pqarrow. It streams record batches, so it works on large files.
func (f *File) Scan(ctx context.Context, names []string, fn func(Row) error) error {
	idx := make([]int, len(names))
	for i, n := range names {
		j, ok := f.index[n]
		if !ok {
			return fmt.Errorf("pqcheck: no column %q", n)
		}
		if c, _ := f.Column(n); !c.Leaf {
			return fmt.Errorf("pqcheck: column %q is not a flat leaf", n)
		}
		idx[i] = j
	}
	fr, err := pqarrow.NewFileReader(f.rdr, pqarrow.ArrowReadProperties{BatchSize: 16 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("pqcheck: arrow reader: %w", err)
	}
	rr, err := fr.GetRecordReader(ctx, idx, nil)
	if err != nil {
		return fmt.Errorf("pqcheck: record reader: %w", err)
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		for row := range int(rec.NumRows()) {
			if err := fn(Row{rec: rec, row: row}); err != nil {
				return err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("pqcheck: read: %w", err)
	}
	return nil
}

// Strings returns every value of a string column. A null is an error: the
// contract writes "" for a missing value.
func (f *File) Strings(name string) ([]string, error) {
	out := make([]string, 0, f.NumRows)
	err := f.Scan(context.Background(), []string{name}, func(r Row) error {
		if r.IsNull(0) {
			return fmt.Errorf("pqcheck: %s row %d is null", name, len(out))
		}
		out = append(out, r.String(0))
		return nil
	})
	return out, err
}

// Doubles returns every value of a double column; a null is an error.
func (f *File) Doubles(name string) ([]float64, error) {
	out := make([]float64, 0, f.NumRows)
	err := f.Scan(context.Background(), []string{name}, func(r Row) error {
		if r.IsNull(0) {
			return fmt.Errorf("pqcheck: %s row %d is null", name, len(out))
		}
		out = append(out, r.Double(0))
		return nil
	})
	return out, err
}

// TimestampsMillis returns every value of a timestamp column in Unix
// milliseconds; a null is an error.
func (f *File) TimestampsMillis(name string) ([]int64, error) {
	out := make([]int64, 0, f.NumRows)
	err := f.Scan(context.Background(), []string{name}, func(r Row) error {
		if r.IsNull(0) {
			return fmt.Errorf("pqcheck: %s row %d is null", name, len(out))
		}
		out = append(out, r.TimestampMillis(0))
		return nil
	})
	return out, err
}

// SumBy sums the double column valueCol per value of the string column
// groupCol, e.g. totalCost per properties.namespace.
func (f *File) SumBy(groupCol, valueCol string) (map[string]float64, error) {
	sums := map[string]float64{}
	err := f.Scan(context.Background(), []string{groupCol, valueCol}, func(r Row) error {
		if r.IsNull(0) || r.IsNull(1) {
			return fmt.Errorf("pqcheck: null in %s or %s", groupCol, valueCol)
		}
		sums[r.String(0)] += r.Double(1)
		return nil
	})
	return sums, err
}
