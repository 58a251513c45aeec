package config

import (
	"os"
	"strings"
	"testing"
)

func TestUsageListsEveryVariable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	Usage(&b)
	for _, v := range Vars() {
		if !strings.Contains(b.String(), v.Name) {
			t.Errorf("--help misses %s", v.Name)
		}
	}
	if !strings.Contains(b.String(), "http://kubecost-cost-analyzer.kubecost:9090") {
		t.Errorf("--help misses the endpoint default:\n%s", b.String())
	}
}

// TestReadmeListsEveryVariable keeps the README's configuration table in
// step with the code, which is the source of truth.
func TestReadmeListsEveryVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Vars() {
		row := "| `" + v.Name + "` | "
		i := strings.Index(string(b), row)
		if i < 0 {
			t.Errorf("README.md has no row for %s", v.Name)
			continue
		}
		line := string(b[i:])
		line = line[:strings.IndexByte(line, '\n')]
		if v.Default != "" && !strings.Contains(line, "`"+v.Default+"`") {
			t.Errorf("README.md row for %s does not show its default %q: %s", v.Name, v.Default, line)
		}
	}
}
