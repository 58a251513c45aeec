package destination

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestDocsTableListsEveryField: docs/object-store-config.md names every
// field the parser knows, so none is mapped, ignored or refused without
// the table saying which.
func TestDocsTableListsEveryField(t *testing.T) {
	b, err := os.ReadFile("../../docs/object-store-config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			name := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			p := path + name
			if ft := typ.Field(i).Type; ft.Kind() == reflect.Struct {
				walk(ft, p+".")
				continue
			}
			// A row may list siblings after the first full path.
			if !strings.Contains(doc, "`"+p+"`") && !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/object-store-config.md does not mention %s", p)
			}
		}
	}
	walk(reflect.TypeFor[bucketConfig](), "")
	walk(reflect.TypeFor[S3](), "config.")
	walk(reflect.TypeFor[Filesystem](), "config.")
}

// TestDocsTableSaysWhatTheCodeDoes checks each row of the `type: S3`
// table against the parser, not only its name: a field the row calls "no
// effect" must, written alone in a file, get its "has no effect" log line
// from Notices (so a field the code starts to read cannot keep that row),
// and a field called "mapped" must not (unless the row names when it has
// none).
func TestDocsTableSaysWhatTheCodeDoes(t *testing.T) {
	b, err := os.ReadFile("../../docs/object-store-config.md")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			name := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			if ft := typ.Field(i).Type; ft.Kind() == reflect.Struct && ft.Name() != "Duration" {
				walk(ft, path+name+".")
			} else {
				types[path+name] = ft
			}
		}
	}
	walk(reflect.TypeFor[S3](), "config.")
	rows := 0
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `config.") || len(cells) < 3 {
			continue
		}
		effect, what := cells[1], cells[2]
		for _, path := range rowFields(strings.TrimPrefix(cells[0], "| ")) {
			typ, ok := types[path]
			if !ok {
				if !strings.HasPrefix(path, "config.directory") {
					t.Errorf("docs row %s names no field of the S3 config", path)
				}
				continue
			}
			noted, parsed := noticeFor(t, path, typ)
			switch {
			case effect == "no effect" && !noted:
				t.Errorf("docs say %s has no effect, but a file that writes it gets no notice: the code reads it", path)
			case effect == "mapped" && parsed && noted && !strings.Contains(what, "no effect"):
				t.Errorf("docs say %s is mapped, but Notices says it has no effect", path)
			}
			rows++
		}
	}
	if rows < 30 {
		t.Fatalf("read %d fields from the S3 table", rows)
	}
}

// rowFields expands a row's first cell: "`config.a.b`, `c`" is
// config.a.b and config.a.c.
func rowFields(cell string) []string {
	var out []string
	parent := ""
	for _, part := range strings.Split(cell, ", ") {
		name := strings.Trim(part, "`")
		if strings.HasPrefix(name, "config.") {
			parent = name[:strings.LastIndex(name, ".")+1]
			out = append(out, name)
		} else if parent != "" {
			out = append(out, parent+name)
		}
	}
	return out
}

// noticeFor writes path alone (with a non-default value of its type) into
// a minimal S3 file and reports whether Notices names it, and whether
// the file parsed at all.
func noticeFor(t *testing.T, path string, typ reflect.Type) (noted, parsed bool) {
	t.Helper()
	var val string
	switch {
	case typ.Name() == "Duration":
		val = "7s"
	case typ.Kind() == reflect.Bool:
		val = "true"
	case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Int64:
		val = "8388608"
	case typ.Kind() == reflect.String:
		val = "x"
	default:
		return false, false
	}
	parts := strings.Split(path, ".")
	var y strings.Builder
	y.WriteString("type: S3\nconfig:\n  bucket: b\n  endpoint: s3.amazonaws.com\n")
	for i, p := range parts[1:] {
		y.WriteString(strings.Repeat("  ", i+1) + p + ":")
		if i == len(parts)-2 {
			y.WriteString(" " + val)
		}
		y.WriteString("\n")
	}
	f, err := Parse([]byte(y.String()))
	if err != nil {
		return false, false
	}
	for _, n := range f.Notices() {
		if p := strings.Fields(n); len(p) > 1 && strings.HasPrefix(path, p[1]) {
			return true, true
		}
	}
	return false, true
}
