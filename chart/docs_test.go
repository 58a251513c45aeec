package chart_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readmeRow matches a row of the "All values" table: | `key` | `default` | ...
var readmeRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([^`]*)` \\|")

// TestReadmeListsEveryValue checks that README.md lists every key of
// values.yaml with its default (as JSON), and no key that does not exist,
// so that the docs cannot drift from the chart.
func TestReadmeListsEveryValue(t *testing.T) {
	section := readmeSection(t, "All values")
	documented := map[string]string{}
	for _, m := range readmeRow.FindAllStringSubmatch(section, -1) {
		documented[m[1]] = m[2]
	}
	leaves := map[string]string{}
	flatten("", readValues(t, "values.yaml"), leaves)
	keys := make([]string, 0, len(leaves))
	for k := range leaves {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		got, ok := documented[k]
		switch {
		case !ok:
			t.Errorf("README.md does not list `%s` (default `%s`) in the values table", k, leaves[k])
		case got != leaves[k]:
			t.Errorf("README.md gives `%s` the default `%s`, values.yaml has `%s`", k, got, leaves[k])
		}
	}
	for k := range documented {
		if _, ok := leaves[k]; !ok {
			t.Errorf("README.md lists `%s`, which values.yaml does not have", k)
		}
	}
}

// flatten records every leaf of values (a scalar, a list or an empty map)
// under its dotted path, encoded as compact JSON.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	out[prefix] = strings.TrimSpace(buf.String())
}

// readmeSection returns the body of README.md's "## heading" section, up
// to the next level-two heading.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## "+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q section", "## "+heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}
