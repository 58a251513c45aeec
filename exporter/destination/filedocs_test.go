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
