package pqcheck

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// These tests write fixtures with arrow-go's own writer, so that pqcheck is
// tested without the writer it exists to check.

var (
	tsUTC   = &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	tsLocal = &arrow.TimestampType{Unit: arrow.Millisecond}
	tsMicro = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// fixture writes rows of (string, timestamp, double) columns named and
// typed as given, chunkRows rows per row group.
func fixture(t *testing.T, fields []arrow.Field, rows int, chunkRows int64, codec compress.Compression, meta map[string]string) []byte {
	t.Helper()
	md := arrow.MetadataFrom(meta)
	sc := arrow.NewSchema(fields, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range rows {
		for j, f := range fields {
			fb := b.Field(j)
			switch f.Type.ID() {
			case arrow.STRING:
				if f.Nullable && i == rows-1 {
					fb.AppendNull()
				} else {
					fb.(*array.StringBuilder).Append([]string{"a", "b", "c"}[i%3])
				}
			case arrow.BINARY:
				fb.(*array.BinaryBuilder).Append([]byte("x"))
			case arrow.FLOAT64:
				fb.(*array.Float64Builder).Append(float64(i) + 0.5)
			case arrow.FLOAT32:
				fb.(*array.Float32Builder).Append(float32(i))
			case arrow.TIMESTAMP:
				v := int64(1767225600000 + i)
				if f.Type.(*arrow.TimestampType).Unit == arrow.Microsecond {
					v *= 1000
				}
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(v))
			case arrow.STRUCT:
				sb := fb.(*array.StructBuilder)
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Float64Builder).Append(1)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(codec))
	if err := pqarrow.WriteTable(tbl, &buf, chunkRows, props, pqarrow.NewArrowWriterProperties()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var goodFields = []arrow.Field{
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: "window.start", Type: tsUTC},
	{Name: "totalCost", Type: arrow.PrimitiveTypes.Float64},
	{Name: "properties.labels.app.kubernetes.io/name", Type: arrow.BinaryTypes.String},
}

var goodContract = []schema.Column{
	{Name: "name", Type: schema.String},
	{Name: "window.start", Type: schema.Timestamp},
	{Name: "totalCost", Type: schema.Double},
	{Name: "properties.labels.app.kubernetes.io/name", Type: schema.String},
}

func TestInspect(t *testing.T) {
	b := fixture(t, goodFields, 10, 4, compress.Codecs.Zstd, map[string]string{"k": "v"})
	f, err := OpenBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Conforms(f, goodContract); err != nil {
		t.Fatal(err)
	}
	if f.NumRows != 10 || !slices.Equal(f.RowGroups, []int64{4, 4, 2}) {
		t.Errorf("rows %d, row groups %v", f.NumRows, f.RowGroups)
	}
	if got := f.Codecs(); !slices.Equal(got, []string{"ZSTD"}) {
		t.Errorf("codecs %v", got)
	}
	if f.KeyValue["k"] != "v" {
		t.Errorf("key/value metadata %v", f.KeyValue)
	}
	ts, _ := f.Column("window.start")
	if !ts.Timestamp || ts.TimeUnit != "ms" || !ts.AdjustedToUTC || ts.Physical != "INT64" || ts.Converted != "TIMESTAMP_MILLIS" {
		t.Errorf("window.start = %+v", ts)
	}
	name, _ := f.Column("name")
	if !name.String || name.Physical != "BYTE_ARRAY" || name.Converted != "UTF8" {
		t.Errorf("name = %+v", name)
	}
	if !slices.Equal(f.Names(), []string{"name", "window.start", "totalCost", "properties.labels.app.kubernetes.io/name"}) {
		t.Errorf("names %q", f.Names())
	}

	names, err := f.Strings("name")
	if err != nil || !slices.Equal(names, []string{"a", "b", "c", "a", "b", "c", "a", "b", "c", "a"}) {
		t.Errorf("Strings = %q, %v", names, err)
	}
	starts, err := f.TimestampsMillis("window.start")
	if err != nil || starts[0] != 1767225600000 || starts[9] != 1767225600009 {
		t.Errorf("TimestampsMillis = %v, %v", starts, err)
	}
	costs, err := f.Doubles("totalCost")
	if err != nil || costs[3] != 3.5 {
		t.Errorf("Doubles = %v, %v", costs, err)
	}
	sums, err := f.SumBy("name", "totalCost")
	want := map[string]float64{"a": 0.5 + 3.5 + 6.5 + 9.5, "b": 1.5 + 4.5 + 7.5, "c": 2.5 + 5.5 + 8.5}
	if err != nil || !maps.Equal(sums, want) {
		t.Errorf("SumBy = %v, %v; want %v", sums, err, want)
	}
	if _, err := f.Strings("nope"); err == nil {
		t.Error("reading a missing column succeeded")
	}
}

func TestConformsRejects(t *testing.T) {
	swap := slices.Clone(goodFields)
	swap[2], swap[3] = swap[3], swap[2]
	retype := func(i int, dt arrow.DataType) []arrow.Field {
		fs := slices.Clone(goodFields)
		fs[i].Type = dt
		return fs
	}
	nested := slices.Clone(goodFields)
	nested[2] = arrow.Field{Name: "totalCost", Type: arrow.StructOf(arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Float64})}

	for _, tc := range []struct {
		name   string
		fields []arrow.Field
		want   string
	}{
		{"order", swap, `column 2 is "properties.labels.app.kubernetes.io/name", want "totalCost"`},
		{"missing", goodFields[:3], `missing column 3`},
		{"extra", append(slices.Clone(goodFields), arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}), `unexpected column 4 "x"`},
		{"local timestamp", retype(1, tsLocal), `want INT64 Timestamp(ms, isAdjustedToUTC=true)`},
		{"micro timestamp", retype(1, tsMicro), `want INT64 Timestamp(ms, isAdjustedToUTC=true)`},
		{"binary not string", retype(0, arrow.BinaryTypes.Binary), `want BYTE_ARRAY String`},
		{"float not double", retype(2, arrow.PrimitiveTypes.Float32), `want DOUBLE`},
		{"string not double", retype(2, arrow.BinaryTypes.String), `want DOUBLE`},
		{"nested", nested, `is a group`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fixture(t, tc.fields, 3, 100, compress.Codecs.Snappy, nil)
			f, err := OpenBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			err = Conforms(f, goodContract)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Conforms = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestNullIsAnError(t *testing.T) {
	fields := slices.Clone(goodFields)
	fields[0].Nullable = true
	f, err := OpenBytes(fixture(t, fields, 3, 100, compress.Codecs.Snappy, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if c, _ := f.Column("name"); c.Repetition != "optional" {
		t.Errorf("repetition %q, want optional", c.Repetition)
	}
	if _, err := f.Strings("name"); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("Strings = %v, want a null error", err)
	}
}

func TestOpenRejectsGarbage(t *testing.T) {
	if _, err := OpenBytes([]byte("not a parquet file at all")); err == nil {
		t.Error("opened garbage")
	}
}
