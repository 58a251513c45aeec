package bill_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/dirstore"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// TestFixtureTypesMatchDictionary reads the fixture's footer with arrow-go
// (pqcheck), a reader that shares no code with the writer, and wants
// every column of the table, in its order, with the table's type.
func TestFixtureTypesMatchDictionary(t *testing.T) {
	var buf bytes.Buffer
	if err := curfixture.WriteParquet(&buf, curfixture.Canonical(), curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := pqcheck.OpenBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	for _, c := range bill.Columns() {
		want = append(want, c.Name)
	}
	if !slices.Equal(f.Names(), want) {
		t.Errorf("columns\n%v\nwant\n%v", f.Names(), want)
	}
	for _, c := range bill.Columns() {
		got, ok := f.Column(c.Name)
		if !ok {
			continue
		}
		var pq string
		switch {
		case got.Leaf && got.Physical == "BYTE_ARRAY" && got.String:
			pq = bill.ParquetString
		case got.Leaf && got.Physical == "DOUBLE" && got.Logical == "None":
			pq = bill.ParquetDouble
		case got.Leaf && got.Physical == "INT64" && got.Timestamp && got.TimeUnit == "ms" && got.AdjustedToUTC:
			pq = bill.ParquetTimestamp
		case !got.Leaf && got.Converted == "MAP" && got.Arrow != nil && strings.HasPrefix(got.Arrow.String(), "map<utf8, utf8"):
			pq = bill.ParquetMap
		}
		if pq != c.Parquet {
			t.Errorf("%s: file has %+v (arrow %v), the table says %s", c.Name, got, got.Arrow, c.Parquet)
		}
		athena := map[string]string{bill.ParquetString: bill.AthenaString, bill.ParquetDouble: bill.AthenaDouble,
			bill.ParquetTimestamp: bill.AthenaTimestamp, bill.ParquetMap: bill.AthenaMap}[c.Parquet]
		if athena != c.Athena || c.Doc == "" || c.Meaning == "" {
			t.Errorf("%s: Athena type %q for Parquet %q (want %q), doc %q", c.Name, c.Athena, c.Parquet, athena, c.Doc)
		}
		if got.Repetition != "optional" {
			t.Errorf("%s: %s, want optional (an export's columns are nullable)", c.Name, got.Repetition)
		}
	}
}

// TestRowGroupSkipping reads one day of the canonical export, written in
// row groups of 5 lines: the other billing period is not opened, row
// groups of other days are not decoded, and the sums are the naive ones
// of that day.
func TestRowGroupSkipping(t *testing.T) {
	dir, _ := curcheck.WriteCanonical(t, 5)
	all := curcheck.ReadDir(t, dir, time.Time{}, time.Time{})
	for _, day := range []time.Time{curfixture.Day1, curfixture.Day2, curfixture.Day3} {
		got := curcheck.ReadDir(t, dir, day, day)
		want := curfixture.Expected(curfixture.Canonical())
		for k := range want {
			if !k.Day.Equal(day) {
				delete(want, k)
			}
		}
		curcheck.Equal(t, got, want)
		s := got.Stats
		t.Logf("%s: %d files, %d row groups, %d skipped, %d lines decoded (all days: %d files, %d row groups, %d lines)",
			day.Format(time.DateOnly), s.Files, s.RowGroups, s.RowGroupsSkipped, s.Lines, all.Stats.Files, all.Stats.RowGroups, all.Stats.Lines)
		// Day3 is alone in its billing period: skipped by listing, not by
		// statistics (checked below).
		if s.Lines >= all.Stats.Lines || (!day.Equal(curfixture.Day3) && s.RowGroupsSkipped == 0) {
			t.Errorf("%s: nothing much skipped: %+v", day.Format(time.DateOnly), s)
		}
	}
	if s := curcheck.ReadDir(t, dir, curfixture.Day3, curfixture.Day3).Stats; s.Files != 1 {
		t.Errorf("Day3 opened %d files, want only its billing period's", s.Files)
	}
}

// streamStore hands out objects without random access, as S3 does.
type streamStore struct{ *dirstore.Store }

func (s streamStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := s.Store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{rc, rc}, nil
}

func TestReadSpoolsStreams(t *testing.T) {
	dir, _ := curcheck.WriteCanonical(t, 0)
	store, err := dirstore.New(dir, dirstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	s, err := bill.Read(context.Background(), bill.Options{Store: streamStore{store}, Prefix: curfixture.Export + "/", TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	curcheck.Equal(t, s, curfixture.Expected(curfixture.Canonical()))
	if s.Stats.BytesSpooled == 0 {
		t.Error("nothing spooled")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
}

// TestReadIgnoresOtherKeys: manifests and files outside BILLING_PERIOD=
// folders are not read; a Parquet file without SCAD columns is an error
// that says so.
func TestReadIgnoresOtherKeysAndRejectsNonSCAD(t *testing.T) {
	dir, _ := curcheck.WriteCanonical(t, 0)
	meta := filepath.Join(dir, curfixture.Export, "metadata", "BILLING_PERIOD=2026-01")
	if err := os.MkdirAll(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meta, "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, curfixture.Export, "notes.parquet"), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	curcheck.Equal(t, curcheck.ReadDir(t, dir, time.Time{}, time.Time{}), curfixture.Expected(curfixture.Canonical()))

	type plain struct {
		Operation string  `parquet:"line_item_operation"`
		Cost      float64 `parquet:"line_item_unblended_cost"`
	}
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []plain{{"RunInstances", 1}}); err != nil {
		t.Fatal(err)
	}
	err := bill.NewAggregator(time.Time{}, time.Time{}).ReadFile(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if !errors.Is(err, bill.ErrNotSCAD) {
		t.Errorf("non-SCAD file: %v, want ErrNotSCAD", err)
	}
}

func TestBillingPeriod(t *testing.T) {
	for key, want := range map[string]string{
		"cur/scad/data/BILLING_PERIOD=2026-01/scad-00001.snappy.parquet": "2026-01-01",
		"BILLING_PERIOD=2025-12/x.parquet":                               "2025-12-01",
		"cur/scad/data/BILLING_PERIOD=2026-13/x.parquet":                 "",
		"cur/scad/data/x.parquet":                                        "",
	} {
		p, ok := bill.BillingPeriod(key)
		if got := map[bool]string{true: p.Format(time.DateOnly)}[ok]; got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

var _ bill.Reader = exporter.ObjectStore(nil)

// TestFixtureValuesReadBack decodes the fixture's values with arrow-go:
// nulls where the rows have none, the costs, strings, maps and start
// times the rows hold.
func TestFixtureValuesReadBack(t *testing.T) {
	rows := curfixture.Canonical()
	var buf bytes.Buffer
	if err := curfixture.WriteParquet(&buf, rows, curfixture.Options{RowGroupRows: 7}); err != nil {
		t.Fatal(err)
	}
	f, err := pqcheck.OpenBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(name string) []any {
		v, err := f.Values(name)
		if err != nil || len(v) != len(rows) {
			t.Fatalf("%s: %d values, %v", name, len(v), err)
		}
		return v
	}
	split, parent, op, tags, start := get(bill.ColSplitCost), get(bill.ColParentResourceID), get(bill.ColOperation), get(bill.ColResourceTags), get(bill.ColUsageStart)
	nullParents := 0
	for i, r := range rows {
		if (r.SplitCost == nil) != (split[i] == nil) || r.SplitCost != nil && split[i] != *r.SplitCost {
			t.Errorf("row %d split cost %v, want %v", i, split[i], r.SplitCost)
		}
		if slices.Contains(r.NullStrings, bill.ColParentResourceID) {
			nullParents++
			if parent[i] != nil {
				t.Errorf("row %d parent %v, want null", i, parent[i])
			}
		} else if parent[i] != r.ParentResourceID {
			t.Errorf("row %d parent %v, want %q", i, parent[i], r.ParentResourceID)
		}
		if op[i] != r.Operation {
			t.Errorf("row %d operation %v, want %q", i, op[i], r.Operation)
		}
		got := map[string]string{}
		if e, ok := tags[i].([]pqcheck.Entry); ok {
			for _, kv := range e {
				got[kv.Key] = kv.Value.(string)
			}
		}
		if len(got) != len(r.Tags) || r.Tags != nil && got["aws_eks_namespace"] != r.Tags["aws_eks_namespace"] {
			t.Errorf("row %d tags %v, want %v", i, got, r.Tags)
		}
		if s, _ := start[i].(string); !strings.HasPrefix(s, r.Start.UTC().Format("2006-01-02 15:04:05")) && !strings.HasPrefix(s, r.Start.UTC().Format("2006-01-02T15:04:05")) {
			t.Errorf("row %d start %v, want %s", i, start[i], r.Start.UTC())
		}
	}
	if nullParents == 0 {
		t.Error("no null parent written")
	}
}
