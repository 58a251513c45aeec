package parquetout

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// rootName is the name of the schema's root message. pyarrow names it
// "schema" too, so tools that print it show the same thing for both files.
const rootName = "schema"

// orderedGroup is a flat parquet group whose fields keep the order they were
// given in. parquet.Group is a map and returns its fields sorted by name, so
// "minutes" would land before "name" and the labels would move about; the
// contract (CONTRACT §4) fixes the column order, and QuickSight, Glue and
// humans reading `parquet schema` expect it. parquet-go derives column
// indexes, schema elements and column chunks from Node.Fields(), so
// returning them in contract order is enough for the file to follow it.
//
// The equivalent parquet.Group answers every other method, GoType too,
// which only reflection-based code paths consult: a Go struct cannot carry
// these names as field names anyway, so its sorted struct is as good an
// answer as any.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

// namedField attaches a column name to a leaf node. Names are taken
// verbatim: "window.start" is one top-level column, not a nested group.
type namedField struct {
	parquet.Node
	name string
}

func (f *namedField) Name() string { return f.name }

// Value is used by parquet-go's reflection-based row (de)construction,
// which this writer never calls; it supports maps keyed by column name so
// that a stray use behaves sensibly rather than panicking.
func (f *namedField) Value(base reflect.Value) reflect.Value {
	for base.Kind() == reflect.Interface || base.Kind() == reflect.Pointer {
		if base.IsNil() {
			return reflect.Value{}
		}
		base = base.Elem()
	}
	if base.Kind() == reflect.Map && base.Type().Key().Kind() == reflect.String {
		return base.MapIndex(reflect.ValueOf(f.name).Convert(base.Type().Key()))
	}
	return reflect.Value{}
}

func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

func (g *orderedGroup) String() string {
	var b strings.Builder
	if err := parquet.PrintSchema(&b, rootName, g); err != nil {
		return fmt.Sprintf("message %s { <%v> }", rootName, err)
	}
	return b.String()
}

// source says where a column's value comes from in a schema.Record.
type source struct {
	kind  sourceKind
	index int // into Num, Props, or the LABELS/ANNOTATIONS position
}

type sourceKind uint8

const (
	srcName sourceKind = iota
	srcStart
	srcEnd
	srcNum
	srcProp
	srcLabel
	srcAnnotation
	srcExtra // index into Record.X
)

// plan maps every contract column, in order, to its Record source. It is
// derived from the column names so that the writer follows schema.Columns
// instead of restating its order; a column it cannot place is an error,
// which makes a contract change without a writer change fail loudly.
func plan(p *schema.Projection) ([]schema.Column, []source, error) {
	cols := p.Columns()
	labels, annotations := p.Labels(), p.Annotations()
	props := make(map[string]int, schema.NumProps)
	for i := range schema.NumProps {
		props["properties."+schema.PropName(i)] = i
	}
	srcs := make([]source, len(cols))
	seen := make(map[string]bool, len(cols))
	nl, na := 0, 0
	for i, c := range cols {
		if seen[c.Name] {
			return nil, nil, fmt.Errorf("parquet: duplicate column %q", c.Name)
		}
		seen[c.Name] = true
		var s source
		want := schema.String
		switch {
		case c.Name == "name":
			s = source{kind: srcName}
		case c.Name == "window.start":
			s, want = source{kind: srcStart}, schema.Timestamp
		case c.Name == "window.end":
			s, want = source{kind: srcEnd}, schema.Timestamp
		case schema.DoubleIndex(c.Name) >= 0:
			s, want = source{kind: srcNum, index: schema.DoubleIndex(c.Name)}, schema.Double
		case nl < len(labels) && c.Name == schema.LabelPrefix+labels[nl]:
			s = source{kind: srcLabel, index: nl}
			nl++
		case na < len(annotations) && c.Name == schema.AnnotationPrefix+annotations[na]:
			s = source{kind: srcAnnotation, index: na}
			na++
		case schema.ExtraIndex(c.Name) >= 0 && c.Type != schema.String:
			s = source{kind: srcExtra, index: schema.ExtraIndex(c.Name)}
			want = schema.Extras()[s.index].Type
		default:
			j, ok := props[c.Name]
			if !ok {
				return nil, nil, fmt.Errorf("parquet: column %q has no source in schema.Record", c.Name)
			}
			s = source{kind: srcProp, index: j}
		}
		if c.Type != want {
			return nil, nil, fmt.Errorf("parquet: column %q is %s, writer expects %s", c.Name, c.Type, want)
		}
		srcs[i] = s
	}
	if nl != len(labels) || na != len(annotations) {
		return nil, nil, fmt.Errorf("parquet: %d of %d label and %d of %d annotation columns placed", nl, len(labels), na, len(annotations))
	}
	return cols, srcs, nil
}

// buildSchema turns the contract columns into a parquet schema.
//
// Every CCA column is REQUIRED: the contract fills "" and 0 for missing
// values, so there is never a null to encode, and required columns need no
// definition levels. Athena, Glue and pyarrow read required and optional
// columns alike. The appended columns are OPTIONAL and may be nested
// (nested.go).
//
// Strings in dict get RLE_DICTIONARY encoding (the writer falls back to
// PLAIN per column chunk when a dictionary grows past DictionaryMaxBytes).
func buildSchema(cols []schema.Column, dict func(schema.Column) bool) (*parquet.Schema, error) {
	g := &orderedGroup{
		Group:  make(parquet.Group, len(cols)),
		fields: make([]parquet.Field, len(cols)),
	}
	for i, c := range cols {
		var n parquet.Node
		switch c.Type {
		case schema.String:
			n = stringNode(dict(c))
		case schema.Double:
			n = parquet.Leaf(parquet.DoubleType)
		case schema.Timestamp:
			n = parquet.Timestamp(parquet.Millisecond) // isAdjustedToUTC=true
		default:
			var err error
			if n, err = nestedNode(c, dict(c)); err != nil {
				return nil, err
			}
		}
		g.fields[i] = &namedField{Node: n, name: c.Name}
		g.Group[c.Name] = n
	}
	return parquet.NewSchema(rootName, g), nil
}

// stringNode is a string leaf, dictionary-encoded when dict is true.
func stringNode(dict bool) parquet.Node {
	if dict {
		return parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	}
	return parquet.String()
}

// dictionaryFor reports whether a string column is worth a dictionary.
// Nearly every property repeats across rows (a day has a few namespaces,
// nodes, zones and label values); the allocation name and the pod name are
// close to unique per row, so a dictionary would only cost a hash per value
// before falling back to PLAIN.
func dictionaryFor(c schema.Column) bool {
	switch c.Name {
	case "name", "properties.pod":
		return false
	}
	return true
}
