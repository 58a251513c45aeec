package config

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
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
	// The endpoint's default is discovery: --help says where it looks.
	for _, want := range []string{"http://<release>-frontend.<namespace>:9090", "http://<release>-cost-analyzer.<namespace>:9090"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--help misses the discovery of %s:\n%s", want, b.String())
		}
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

// TestUsageColumnsAligned: every variable's description starts in the same
// column, also after the longest default (CLUSTER_ID's condition).
func TestUsageColumnsAligned(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	Usage(&b)
	col := -1
	for _, v := range Vars() {
		var line string
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "  "+v.Name+" ") {
				line = l
			}
		}
		i := strings.Index(line, v.Desc)
		if line == "" || i < 0 {
			t.Fatalf("--help has no line for %s with its description", v.Name)
		}
		if col < 0 {
			col = i
		}
		if i != col {
			t.Errorf("%s: description starts in column %d, others in %d:\n%s", v.Name, i, col, line)
		}
		if def := line[len("  "+v.Name):i]; strings.TrimSpace(def) == "" {
			t.Errorf("%s: no default shown: %q", v.Name, line)
		}
	}
}

// TestSharedDefaults: the literals in the struct tags are the exported
// defaults other commands use.
func TestSharedDefaults(t *testing.T) {
	t.Parallel()
	want := map[string]string{"BACKFILL_PERIOD_DAYS": strconv.Itoa(exporter.DefaultBackfillDays), "SETTLE_HOURS": strconv.Itoa(int(exporter.DefaultSettle / time.Hour))}
	for _, v := range Vars() {
		if w, ok := want[v.Name]; ok && v.Default != w {
			t.Errorf("%s: tag default %q, exported default %s", v.Name, v.Default, w)
		}
	}
	if exporter.DefaultSettle != 48*time.Hour {
		t.Errorf("DefaultSettle = %v, want CCA's 48h", exporter.DefaultSettle)
	}
	c, err := Load(func(k string) (string, bool) {
		v, ok := map[string]string{"OUTPUT_DIR": "/tmp/x", "CLUSTER_ID": "arn:aws:eks:us-east-1:111122223333:cluster/prod",
			"BACKFILL_PERIOD_DAYS": strconv.Itoa(exporter.MinBackfillDays - 1)}[k]
		return v, ok
	})
	if err == nil {
		t.Errorf("BACKFILL_PERIOD_DAYS=%d accepted: %+v", exporter.MinBackfillDays-1, c)
	}
}
