package parquetout

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// wantNested is what an independent reader must return for one appended
// column of r, in pqcheck.Values' terms.
func wantNested(e schema.ExtraColumn, n *schema.Nested) any {
	if !n.Set {
		return nil
	}
	fields := func(en *schema.Entry) map[string]any {
		m := map[string]any{}
		for i, f := range e.Fields {
			o := en.Fields[i]
			switch {
			case !o.Set:
				m[f.Name] = nil
			case f.Type == schema.Bool:
				m[f.Name] = o.B
			case f.Type == schema.NullableString:
				m[f.Name] = o.Str
			default:
				m[f.Name] = o.Num
			}
		}
		return m
	}
	switch e.Type {
	case schema.NullableDouble:
		return n.Num
	case schema.StringMap:
		out := []pqcheck.Entry{}
		for _, kv := range n.KV {
			out = append(out, pqcheck.Entry{Key: kv.Key, Value: kv.Value})
		}
		return out
	case schema.StringList:
		out := []any{}
		for _, s := range n.List {
			out = append(out, s)
		}
		return out
	case schema.Struct:
		return fields(&n.Entries[0])
	case schema.StructMap:
		out := []pqcheck.Entry{}
		for i := range n.Entries {
			out = append(out, pqcheck.Entry{Key: n.Entries[i].Key, Value: fields(&n.Entries[i])})
		}
		return out
	}
	panic("unknown type")
}

// TestNestedRoundTrip reads every appended column back with arrow-go and
// compares each row with what was written: maps keep every entry in order,
// lists their elements, structs their fields, and a field Kubecost did not
// report is null, not 0.
func TestNestedRoundTrip(t *testing.T) {
	const n = 3000
	p := testProjection()
	f := pqcheck.Check(t, writeRows(t, p, n, Options{RowGroupRows: 1000}), p)
	g := newGen(p)
	r := p.NewRecord()
	seen := map[string][2]int{} // column -> rows null, rows not null
	for x, e := range schema.Extras() {
		got, err := f.Values(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%s: %d values, want %d", e.Name, len(got), n)
		}
		for i := range n {
			g.fill(r, i)
			want := wantNested(e, &r.X[x])
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("row %d %s = %#v, want %#v", i, e.Name, got[i], want)
			}
			c := seen[e.Name]
			if want == nil {
				c[0]++
			} else {
				c[1]++
			}
			seen[e.Name] = c
		}
	}
	// Each appended column must have been exercised with values, and the
	// nullable ones with nulls too.
	for _, e := range schema.Extras() {
		c := seen[e.Name]
		switch e.Name {
		case "ramCostIdle", "gpuCostIdle", "gpuRequestAverage", "gpuUsageAverage", "carbonCost":
			if c[1] != 0 {
				t.Errorf("%s: generator sets it, update this test", e.Name)
			}
			continue
		}
		if c[1] == 0 {
			t.Errorf("%s: no row with a value", e.Name)
		}
	}
	if c := seen["pvs"]; c[0] == 0 {
		t.Errorf("pvs: no null row")
	}
	labels, _ := f.Values("properties.labels")
	if m := labels[0].([]pqcheck.Entry); len(m) < 20 {
		t.Errorf("row 0 has %d labels, want the generator's 20 or more", len(m))
	}
}

// TestMapDoesNotRetainRecord is TestDoesNotRetainRecord for the map
// columns, which the writer fills on a path of their own: the caller
// overwrites the entries of the same slice for the next record, as the
// decoder does.
func TestMapDoesNotRetainRecord(t *testing.T) {
	p := testProjection()
	var out bytes.Buffer
	w, err := NewWriter(&out, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.NewRecord()
	labels := &r.X[schema.XLabels]
	labels.Set = true
	labels.KV = append(labels.KV, schema.KV{Key: "team", Value: "payments"}, schema.KV{Key: "app", Value: "web"})
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	kv := labels.KV[:2] // the same array, other entries
	p.Reset(r)
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	kv[0], kv[1] = schema.KV{Key: "tier", Value: "gold"}, schema.KV{Key: "app", Value: "api"}
	labels.Set, labels.KV = true, kv[:1]
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := pqcheck.Check(t, out.Bytes(), p).Values("properties.labels")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		[]pqcheck.Entry{{Key: "team", Value: "payments"}, {Key: "app", Value: "web"}},
		nil,
		[]pqcheck.Entry{{Key: "tier", Value: "gold"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("properties.labels = %#v, want %#v", got, want)
	}
}
