package parquetout

import (
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
