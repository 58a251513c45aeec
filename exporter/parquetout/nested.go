package parquetout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The appended columns of schema version 2 are nullable, some nested. parquet-go's column
// writers take leaf values with repetition and definition levels, which this file computes
// ("shreds") from a schema.Nested. Each type's schema and levels:
//
//	NullableDouble  optional double                       def: null 0, value 1
//	StringMap       optional group (MAP) {                key: null 0, empty 1, entry 2
//	                  repeated group key_value {          value: as key, 3 when set
//	                    required binary key (STRING)
//	                    optional binary value (STRING) } }
//	StringList      optional group (LIST) {               element: null 0, empty 1, 3
//	                  repeated group list {
//	                    optional binary element (STRING) } }
//	Struct          optional group { optional fields }    field: null 0, unset 1, set 2
//	StructMap       optional group (MAP) {                key: as StringMap
//	                  repeated group key_value {          field: null 0, empty 1,
//	                    required binary key (STRING)             unset 3, set 4
//	                    optional group value { optional fields } } }
//
// A row's first value has repetition level 0, the same map's or list's next entries 1.

// nestedCol is where an appended column's leaves are in the file.
type nestedCol struct {
	x     int         // schema.X* index
	typ   schema.Type // column type
	slot  int         // index of its first leaf in Writer.nested
	ftyps []schema.Type
}

// leaves returns a column's number of leaf columns.
func leaves(c schema.Column) int {
	switch c.Type {
	case schema.StringMap:
		return 2
	case schema.Struct:
		return len(c.Fields)
	case schema.StructMap:
		return 1 + len(c.Fields)
	}
	return 1
}

// nestedNode returns the parquet node of an appended column.
func nestedNode(c schema.Column, dict bool) (parquet.Node, error) {
	if !slices.IsSortedFunc(c.Fields, func(a, b schema.Column) int { return strings.Compare(a.Name, b.Name) }) {
		// parquet.Group orders fields by name; else Glue types would disagree with the file.
		return nil, fmt.Errorf("parquet: fields of %q are not sorted by name", c.Name)
	}
	switch c.Type {
	case schema.NullableDouble:
		return parquet.Optional(parquet.Leaf(parquet.DoubleType)), nil
	case schema.StringMap:
		return parquet.Optional(parquet.Map(stringNode(dict), parquet.Optional(stringNode(dict)))), nil
	case schema.StringList:
		return parquet.Optional(parquet.List(parquet.Optional(stringNode(dict)))), nil
	case schema.Struct, schema.StructMap:
	default:
		return nil, fmt.Errorf("parquet: column %q has unsupported type %s", c.Name, c.Type)
	}
	g := parquet.Group{}
	for _, f := range c.Fields {
		switch f.Type {
		case schema.NullableDouble:
			g[f.Name] = parquet.Optional(parquet.Leaf(parquet.DoubleType))
		case schema.NullableString:
			g[f.Name] = parquet.Optional(stringNode(dict))
		case schema.Bool:
			g[f.Name] = parquet.Optional(parquet.Leaf(parquet.BooleanType))
		default:
			return nil, fmt.Errorf("parquet: field %s.%s has unsupported type %s", c.Name, f.Name, f.Type)
		}
	}
	if c.Type == schema.Struct {
		return parquet.Optional(g), nil
	}
	return parquet.Optional(parquet.Map(stringNode(dict), parquet.Optional(g))), nil
}

// put appends v with its levels to leaf i of nc. The level setters inline where Value.Level
// does not (100+ values a row); the column index Level also sets is unread by
// ColumnWriter.WriteRowValues.
func (w *Writer) put(nc *nestedCol, i int, v parquet.Value, rep, def int) {
	s := nc.slot + i
	v.SetRepetitionLevel(rep)
	v.SetDefinitionLevel(def)
	w.nested[s] = append(w.nested[s], v)
}

// putAll writes a null (or empty) value with definition level def to n leaves of nc.
func (w *Writer) putAll(nc *nestedCol, n int, def int) {
	var null parquet.Value
	null.SetDefinitionLevel(def)
	for i := nc.slot; i < nc.slot+n; i++ {
		w.nested[i] = append(w.nested[i], null)
	}
}

// strMap appends a non-empty string map to its key and value leaves. The writer's hot loop
// (20+ labels a row, four map columns): it grows both once and fills them in place.
func (w *Writer) strMap(nc *nestedCol, kvs []schema.KV) {
	keys, vals := w.nested[nc.slot], w.nested[nc.slot+1]
	n, m := len(keys), len(keys)+len(kvs)
	keys = slices.Grow(keys, len(kvs))[:m]
	vals = slices.Grow(vals, len(kvs))[:m]
	k, v := keys[n:m], vals[n:m]
	rep := 0
	for i := range kvs {
		kv, vv := &k[i], &v[i]
		*kv = str(kvs[i].Key)
		kv.SetRepetitionLevel(rep)
		kv.SetDefinitionLevel(2)
		*vv = str(kvs[i].Value)
		vv.SetRepetitionLevel(rep)
		vv.SetDefinitionLevel(3)
		rep = 1
	}
	w.nested[nc.slot], w.nested[nc.slot+1] = keys, vals
}

// shred appends the leaf values of one row's appended column.
func (w *Writer) shred(nc *nestedCol, x *schema.Nested) {
	switch nc.typ {
	case schema.NullableDouble:
		if x.Set {
			w.put(nc, 0, parquet.DoubleValue(x.Num), 0, 1)
		} else {
			w.put(nc, 0, parquet.Value{}, 0, 0)
		}
	case schema.StringMap:
		if !x.Set || len(x.KV) == 0 {
			w.putAll(nc, 2, b2i(x.Set))
			return
		}
		w.strMap(nc, x.KV)
	case schema.StringList:
		if !x.Set || len(x.List) == 0 {
			w.putAll(nc, 1, b2i(x.Set))
			return
		}
		for i, s := range x.List {
			w.put(nc, 0, str(s), min(i, 1), 3)
		}
	case schema.Struct:
		if !x.Set || len(x.Entries) == 0 {
			w.putAll(nc, len(nc.ftyps), 0)
			return
		}
		w.fields(nc, 0, &x.Entries[0], 0, 1)
	case schema.StructMap:
		if !x.Set || len(x.Entries) == 0 {
			w.putAll(nc, 1+len(nc.ftyps), b2i(x.Set))
			return
		}
		for i := range x.Entries {
			e := &x.Entries[i]
			rep := min(i, 1)
			w.put(nc, 0, str(e.Key), rep, 2)
			w.fields(nc, 1, e, rep, 3)
		}
	}
}

// fields writes one struct value from leaf first; base is the definition level of a present
// struct with an unset field.
func (w *Writer) fields(nc *nestedCol, first int, e *schema.Entry, rep, base int) {
	for f, t := range nc.ftyps {
		o := &e.Fields[f]
		if !o.Set {
			w.put(nc, first+f, parquet.Value{}, rep, base)
			continue
		}
		var v parquet.Value
		switch t {
		case schema.NullableDouble:
			v = parquet.DoubleValue(o.Num)
		case schema.NullableString:
			v = str(o.Str)
		case schema.Bool:
			v = parquet.BooleanValue(o.B)
		}
		w.put(nc, first+f, v, rep, base+1)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
