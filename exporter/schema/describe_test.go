package schema

import (
	"strings"
	"testing"
)

// TestTextTableAligned: `schema --format text` has a header and every row's
// cells start where the header's do, struct and map rows included; the
// long nested types are printed in full below the table.
func TestTextTableAligned(t *testing.T) {
	var b strings.Builder
	d := Describe([]string{"app"}, nil)
	if err := d.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	table, below, _ := strings.Cut(b.String(), "\n\n")
	lines := strings.Split(table, "\n")
	head := lines[0]
	var starts []int
	for _, h := range []string{"GLUE", "PRESTO", "QUICKSIGHT"} {
		i := strings.Index(head, h)
		if !strings.HasPrefix(head, "COLUMN") || i < 0 {
			t.Fatalf("header %q lacks COLUMN/%s", head, h)
		}
		starts = append(starts, i)
	}
	if len(lines)-1 != len(d.Columns) {
		t.Fatalf("%d rows for %d columns", len(lines)-1, len(d.Columns))
	}
	for i, l := range lines[1:] {
		c := d.Columns[i]
		if !strings.HasPrefix(l, c.Name+" ") {
			t.Errorf("row %d %q is not column %s", i, l, c.Name)
		}
		for _, s := range starts {
			if s >= len(l) || l[s-1] != ' ' || l[s] == ' ' {
				t.Errorf("row %q: no cell starts at column %d", l, s)
			}
		}
		if len(c.Glue) > maxTypeWidth && !strings.Contains(below, "glue:   "+c.Glue+"\n") {
			t.Errorf("%s: full glue type %s not printed", c.Name, c.Glue)
		}
	}
	if !strings.Contains(below, "gpuAllocation\n    glue:   struct<") {
		t.Errorf("struct column's type not printed below the table:\n%s", below)
	}
}
