package terraform_test

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/terraform/internal/gen"
)

// TestGeneratedFilesAreCurrent fails when a committed generated file
// (columns.json, the cid-cmd resources, the README tables) differs from
// what its sources render today. It never writes: `make generate` does.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	t.Parallel()
	files, err := gen.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(f.Path)
		if err != nil {
			t.Errorf("%v (run: make generate)", err)
			continue
		}
		if !bytes.Equal(got, f.Content) {
			t.Errorf("%s is stale; run: make generate\n%s", f.Path, firstDiff(string(got), string(f.Content)))
		}
	}
}

// The cid-cmd view selects every column; the cid-cmd dataset those
// QuickSight can read, in the same order.
func TestCIDViewSelectsDatasetColumns(t *testing.T) {
	t.Parallel()
	cid, err := gen.CID()
	if err != nil {
		t.Fatal(err)
	}
	sel, _, _ := splitSQL(t, cid.ViewSQL)
	if !slices.Equal(sel, cid.ViewColumns) || len(sel) == 0 {
		t.Errorf("cid view selects %v, want %v", sel, cid.ViewColumns)
	}
	readable := map[string]bool{}
	for _, c := range schema.Describe(nil, nil).Columns {
		readable[strings.ToLower(c.Name)] = c.QuickSight != ""
	}
	var want []string
	for _, c := range sel {
		if r, ok := readable[c]; r || !ok { // partition keys are strings
			want = append(want, c)
		}
	}
	if !slices.Equal(cid.DatasetColumns, want) || len(want) == len(sel) {
		t.Errorf("cid dataset has %v, want the view's readable columns %v", cid.DatasetColumns, want)
	}
}
