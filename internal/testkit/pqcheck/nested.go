package pqcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// FieldIndex returns the index in schema.Entry.Fields of the struct field
// name of appended column x (a schema.X* index), or -1.
func FieldIndex(x int, name string) int {
	return slices.IndexFunc(schema.Extras()[x].Fields, func(f schema.Column) bool { return f.Name == name })
}

// Entry is one entry of a map value, in file order.
type Entry struct {
	Key   string
	Value any
}

// Values decodes every row of a top-level column of any shape with pqarrow
// and returns it as Go values: nil for null, float64, string, bool,
// []Entry for a map, []any for a list and map[string]any for a struct.
// It reads the whole column, so it is meant for test-sized files.
func (f *File) Values(name string) ([]any, error) {
	leaves := f.leaves[name]
	if len(leaves) == 0 {
		return nil, fmt.Errorf("pqcheck: no column %q", name)
	}
	fr, err := pqarrow.NewFileReader(f.rdr, pqarrow.ArrowReadProperties{BatchSize: 16 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("pqcheck: arrow reader: %w", err)
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return nil, fmt.Errorf("pqcheck: record reader: %w", err)
	}
	defer rr.Release()
	out := make([]any, 0, f.NumRows)
	for rr.Next() {
		rec := rr.RecordBatch()
		col := rec.Column(0)
		for i := range col.Len() {
			out = append(out, goValue(col, i))
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pqcheck: read %s: %w", name, err)
	}
	return out, nil
}

func goValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		out := make([]Entry, 0, end-start)
		for j := int(start); j < int(end); j++ {
			out = append(out, Entry{Key: fmt.Sprint(goValue(keys, j)), Value: goValue(items, j)})
		}
		return out
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := int(start); j < int(end); j++ {
			out = append(out, goValue(a.ListValues(), j))
		}
		return out
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		out := make(map[string]any, a.NumField())
		for k := range a.NumField() {
			out[st.Field(k).Name] = goValue(a.Field(k), i)
		}
		return out
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	}
	return a.ValueStr(i)
}

// arrowType checks that the Arrow type pqarrow derived for a top-level
// column is the shape of an appended column: a map of strings, a list of
// strings, a struct of the listed fields (by name and type), a map of
// such structs, or a double. Every level must be nullable except map keys.
func arrowType(dt arrow.DataType, c schema.Column) error {
	switch c.Type {
	case schema.NullableDouble:
		if dt.ID() != arrow.FLOAT64 {
			return fmt.Errorf("is %s, want double", dt)
		}
	case schema.NullableString:
		if dt.ID() != arrow.STRING {
			return fmt.Errorf("is %s, want string", dt)
		}
	case schema.Bool:
		if dt.ID() != arrow.BOOL {
			return fmt.Errorf("is %s, want bool", dt)
		}
	case schema.StringMap:
		m, ok := dt.(*arrow.MapType)
		if !ok || m.KeyType().ID() != arrow.STRING || m.ItemType().ID() != arrow.STRING {
			return fmt.Errorf("is %s, want map<string, string>", dt)
		}
	case schema.StringList:
		l, ok := dt.(*arrow.ListType)
		if !ok || l.Elem().ID() != arrow.STRING {
			return fmt.Errorf("is %s, want list<string>", dt)
		}
	case schema.Struct:
		return structType(dt, c)
	case schema.StructMap:
		m, ok := dt.(*arrow.MapType)
		if !ok || m.KeyType().ID() != arrow.STRING {
			return fmt.Errorf("is %s, want map<string, struct>", dt)
		}
		return structType(m.ItemType(), c)
	default:
		return fmt.Errorf("unknown contract type %v", c.Type)
	}
	return nil
}

func structType(dt arrow.DataType, c schema.Column) error {
	st, ok := dt.(*arrow.StructType)
	if !ok || st.NumFields() != len(c.Fields) {
		return fmt.Errorf("is %s, want a struct of %d fields", dt, len(c.Fields))
	}
	for i, f := range c.Fields {
		got := st.Field(i)
		if got.Name != f.Name || !got.Nullable {
			return fmt.Errorf("field %d is %s (nullable %v), want nullable %s", i, got.Name, got.Nullable, f.Name)
		}
		if err := arrowType(got.Type, f); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}
