package parquetout

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// rootName is the schema's root message name, as pyarrow's, so tools print both files alike.
const rootName = "schema"

// orderedGroup is a flat parquet group whose fields keep their given order. parquet.Group is
// a map that sorts fields by name ("minutes" before "name"); CONTRACT §4 fixes the order,
// which QuickSight, Glue and `parquet schema` readers expect. parquet-go derives column
// indexes, schema elements and chunks from Node.Fields(), so ordering it is enough.
//
// The parquet.Group answers every other method, GoType too, which only reflection paths
// use: a Go struct cannot carry these names anyway, so its sorted struct does.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

// namedField names a leaf node verbatim: "window.start" is one top-level column, not a group.
type namedField struct {
	parquet.Node
	name string
}

func (f *namedField) Name() string { return f.name }

// Value serves parquet-go's reflection-based row (de)construction, which this writer never
// calls: it reads maps keyed by column name, so a stray use does not panic.
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

// plan maps every contract column, in order, to its Record source by name, so the writer
// follows schema.Columns instead of restating it; a column it cannot place is an error, so a
// contract change without a writer change fails loudly.
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

// buildSchema turns the contract columns into a parquet schema. Every CCA column is
// REQUIRED: the contract fills "" and 0, so there is no null and no definition level;
// Athena, Glue and pyarrow read both alike. The appended columns are OPTIONAL and may be
// nested (nested.go). Strings in dict get RLE_DICTIONARY (PLAIN per column chunk past
// DictionaryMaxBytes).
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

// dictionaryFor reports whether a string column is worth a dictionary. Properties repeat
// (a day has few namespaces, nodes, zones, label values); names and pods are nearly unique
// per row, where a dictionary costs a hash per value before falling back to PLAIN.
func dictionaryFor(c schema.Column) bool {
	switch c.Name {
	case "name", "properties.pod":
		return false
	}
	return true
}
