package bill_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// TestReadRefusesNoExport: an empty folder, or one holding Parquet files
// outside any BILLING_PERIOD= folder (the archive given for the bill, say),
// is not an export: Read says what it expected instead of summing an empty
// bill, which the report would show as every namespace Kubecost's only.
// The export's own folder, and any folder above it, still read.
func TestReadRefusesNoExport(t *testing.T) {
	ctx := context.Background()
	exportDir, _ := curcheck.WriteCanonical(t, 5)
	empty, wrong := t.TempDir(), t.TempDir()
	misplaced := filepath.Join(wrong, "account_id=111122223333", "2026-11-05_prod.snappy.parquet")
	if err := os.MkdirAll(filepath.Dir(misplaced), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(misplaced, []byte("PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, prefix string
		objects           int
	}{
		{"empty folder", empty, "", 0},
		{"no BILLING_PERIOD folder", wrong, "", 1},
		{"prefix beside the export", exportDir, "elsewhere/", 0},
	} {
		store, err := dirstore.New(tc.dir, dirstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := bill.Read(ctx, bill.Options{Store: store, Prefix: tc.prefix})
		if err == nil {
			t.Errorf("%s: Read read an empty bill (%d rows) instead of refusing the location", tc.name, len(s.Rows))
			continue
		}
		want := fmt.Sprintf("found %d objects", tc.objects)
		if msg := err.Error(); !strings.Contains(msg, "BILLING_PERIOD=YYYY-MM") || !strings.Contains(msg, want) {
			t.Errorf("%s: %q: does not say what was expected and what was found (%s)", tc.name, msg, want)
		}
	}
	for _, prefix := range []string{"", curfixture.Export + "/"} {
		store, err := dirstore.New(exportDir, dirstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s, err := bill.Read(ctx, bill.Options{Store: store, Prefix: prefix}); err != nil || len(s.Rows) == 0 {
			t.Errorf("the export under %q: %v", prefix, err)
		}
	}
}
