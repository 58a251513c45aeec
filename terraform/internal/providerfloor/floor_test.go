package providerfloor

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"5.47.0", "5.40.0", 1}, {"5.9.0", "5.40.0", -1}, {"6.0.0", "5.99.9", 1}, {"2.9.0", "2.9.0", 0}} {
		if got, err := Compare(tc.a, tc.b); err != nil || got != tc.want {
			t.Errorf("Compare(%s, %s) = %d, %v, want %d", tc.a, tc.b, got, err, tc.want)
		}
	}
	if _, err := Compare("5.40", "5.40.0"); err == nil {
		t.Error("5.40 accepted as x.y.z")
	}
}

func TestFloor(t *testing.T) {
	table := []Entry{
		{"aws", "resource", "aws_a", "", "5.40.0", "x"},
		{"aws", "resource", "aws_b", "", "5.47.0", "x"},
		{"aws", "resource", "aws_a", "new_arg", "5.50.0", "x"},
		{"helm", "resource", "helm_release", "", "2.9.0", "x"},
	}
	for _, tc := range []struct {
		used    []string
		want    map[string]string
		missing []string
	}{
		{[]string{"resource.aws_a"}, map[string]string{"aws": "5.40.0"}, nil},
		{[]string{"resource.aws_a", "resource.aws_b"}, map[string]string{"aws": "5.47.0"}, nil},
		{[]string{"resource.aws_a", "resource.aws_a.new_arg", "resource.aws_a.old_arg"}, map[string]string{"aws": "5.50.0"}, nil},
		{[]string{"resource.aws_b", "resource.helm_release", "data.aws_c"}, map[string]string{"aws": "5.47.0", "helm": "2.9.0"}, []string{"data.aws_c"}},
	} {
		got, missing, err := Floor(table, tc.used)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.want) || !slices.Equal(missing, tc.missing) {
			t.Errorf("%v: floor %v missing %v, want %v %v", tc.used, got, missing, tc.want, tc.missing)
		}
		for p, v := range tc.want {
			if got[p] != v {
				t.Errorf("%v: %s floor %s, want %s", tc.used, p, got[p], v)
			}
		}
	}
}

// TestTable: every entry is well formed, once, and says where its
// version comes from.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Table {
		if _, err := parse(e.Since); err != nil || e.Source == "" ||
			(e.Kind != "resource" && e.Kind != "data" && e.Kind != "provider") {
			t.Errorf("malformed entry %+v (%v)", e, err)
		}
		if seen[e.Key()] {
			t.Errorf("%s twice", e.Key())
		}
		seen[e.Key()] = true
	}
}
