package parquetout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// writeRows writes rows 0..n-1 of the generator and returns the file.
func writeRows(t testing.TB, p *schema.Projection, n int, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(p)
	r := p.NewRecord()
	for i := range n {
		g.fill(r, i)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.Rows(); got != int64(n) {
		t.Fatalf("Rows() = %d, want %d", got, n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestColumnsFollowContract(t *testing.T) {
	p := testProjection()
	f := pqcheck.Check(t, writeRows(t, p, 100, Options{}), p)

	// Spelled out rather than derived, so that this test catches a change
	// to the contract order as well as a writer that reorders.
	names := f.Names()
	head := []string{"name", "window.start", "window.end", "minutes", "cpuCores"}
	tail := []string{
		"properties.controller", "properties.controllerKind", "properties.providerID",
		"properties.labels.app.kubernetes.io/name", "properties.labels.team",
		"properties.annotations.owner",
		"properties.labels", "properties.annotations",
	}
	cca := 3 + schema.NumDoubles + schema.NumProps + 3
	if !slices.Equal(names[:len(head)], head) {
		t.Errorf("first columns = %q, want %q", names[:len(head)], head)
	}
	if got := names[cca-6 : cca+2]; !slices.Equal(got, tail) {
		t.Errorf("columns around the end of CCA's = %q, want %q", got, tail)
	}
	if want := cca + schema.NumExtra; len(names) != want {
		t.Errorf("%d columns, want %d", len(names), want)
	}

	for i, c := range f.Columns {
		if want := "required"; i < cca && c.Repetition != want || i >= cca && c.Repetition != "optional" {
			t.Errorf("%s is %s", c.Name, c.Repetition)
		}
		if !slices.Equal(c.Codecs, []string{"SNAPPY"}) {
			t.Errorf("%s codecs %v, want [SNAPPY]", c.Name, c.Codecs)
		}
	}
	start, _ := f.Column("window.start")
	if start.Converted != "TIMESTAMP_MILLIS" {
		t.Errorf("window.start converted type %s, want TIMESTAMP_MILLIS for older readers", start.Converted)
	}
	name, _ := f.Column("name")
	if name.Converted != "UTF8" {
		t.Errorf("name converted type %s, want UTF8", name.Converted)
	}
	if ns, _ := f.Column("properties.namespace"); !ns.Dictionary {
		t.Errorf("properties.namespace has no dictionary page (encodings %v)", ns.Encodings)
	}
	if name.Dictionary {
		t.Errorf("name is dictionary-encoded; it is unique per row")
	}
	if f.KeyValue[MetaSchemaVersion] != schema.Version || f.KeyValue[MetaExporterVersion] != exporter.Version {
		t.Errorf("key/value metadata = %v", f.KeyValue)
	}
	if !strings.HasPrefix(f.CreatedBy, "kubecost-s3-exporter version ") {
		t.Errorf("created_by = %q", f.CreatedBy)
	}
}

// want returns the value the contract expects in column c for record r.
// It is written independently of the writer's own column plan.
func want(p *schema.Projection, r *schema.Record, c string) any {
	switch c {
	case "name":
		return r.Name
	case "window.start":
		return r.Start
	case "window.end":
		return r.End
	}
	if i := schema.DoubleIndex(c); i >= 0 {
		return r.Num[i]
	}
	for i := range schema.NumProps {
		if c == "properties."+schema.PropName(i) {
			return r.Props[i]
		}
	}
	for i, l := range p.Labels() {
		if c == "properties.labels."+l {
			return p.UserLabel(r, i)
		}
	}
	for i, a := range p.Annotations() {
		if c == "properties.annotations."+a {
			return p.UserAnnotation(r, i)
		}
	}
	panic("no such column " + c)
}

func TestValuesRoundTrip(t *testing.T) {
	const n = 5000
	p := testProjection()
	f := pqcheck.Check(t, writeRows(t, p, n, Options{RowGroupRows: 2048}), p)
	if f.NumRows != n {
		t.Fatalf("NumRows = %d, want %d", f.NumRows, n)
	}

	cols := schema.CCA(p.Labels(), p.Annotations())
	names := f.Names()[:len(cols)]
	g := newGen(p)
	r := p.NewRecord()
	row := 0
	noTeam, noOwner := 0, 0
	err := f.Scan(t.Context(), names, func(got pqcheck.Row) error {
		g.fill(r, row)
		for i, c := range cols {
			if got.IsNull(i) {
				t.Fatalf("row %d %s is null", row, c.Name)
			}
			var v any
			switch c.Type {
			case schema.String:
				v = got.String(i)
			case schema.Double:
				v = got.Double(i)
			case schema.Timestamp:
				v = got.TimestampMillis(i)
				if tz := got.TimeZone(i); tz != "UTC" {
					t.Fatalf("%s read with time zone %q, want UTC", c.Name, tz)
				}
			}
			if w := want(p, r, c.Name); v != w {
				t.Fatalf("row %d %s = %#v, want %#v", row, c.Name, v, w)
			}
		}
		if got.String(len(cols)-2) == "" {
			noTeam++
		}
		if got.String(len(cols)-1) == "" {
			noOwner++
		}
		row++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if row != n {
		t.Fatalf("scanned %d rows, want %d", row, n)
	}
	// The generator leaves about a quarter of the team labels and a third
	// of the owners unset; they must be "" rather than null or missing.
	if noTeam == 0 || noOwner == 0 {
		t.Errorf("no empty team (%d) or owner (%d) values: missing labels not exercised", noTeam, noOwner)
	}

	// Spot checks against literal values, independent of the generator's
	// plumbing through the projection.
	starts, err := f.TimestampsMillis("window.start")
	if err != nil {
		t.Fatal(err)
	}
	if starts[0] != 1767225600000 {
		t.Errorf("window.start = %d, want 2026-01-01T00:00:00Z in ms", starts[0])
	}
	clusterIDs, err := f.Strings("properties.clusterid")
	if err != nil {
		t.Fatal(err)
	}
	if clusterIDs[n-1] != testClusterID {
		t.Errorf("clusterid = %q", clusterIDs[n-1])
	}
	providers, err := f.Strings("properties.provider")
	if err != nil {
		t.Fatal(err)
	}
	if providers[0] != "AWS" {
		t.Errorf("provider = %q, want AWS", providers[0])
	}
}

func TestSumByNamespace(t *testing.T) {
	const n = 20000
	p := testProjection()
	f := pqcheck.Check(t, writeRows(t, p, n, Options{}), p)

	wantSums := map[string]float64{}
	g := newGen(p)
	r := p.NewRecord()
	ti := schema.DoubleIndex("totalCost")
	for i := range n {
		g.fill(r, i)
		wantSums[r.Props[schema.PropNamespace]] += r.Num[ti]
	}
	got, err := f.SumBy("properties.namespace", "totalCost")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wantSums) {
		t.Fatalf("%d namespaces, want %d", len(got), len(wantSums))
	}
	for ns, w := range wantSums {
		// Same values summed in the same order: equal to the last bit.
		if got[ns] != w {
			t.Errorf("totalCost[%s] = %v, want %v", ns, got[ns], w)
		}
	}
}

func TestRowGroups(t *testing.T) {
	p := testProjection()
	for _, tc := range []struct {
		rowGroupRows, rows int
		want               []int64
	}{
		{1000, 4500, []int64{1000, 1000, 1000, 1000, 500}},
		{1500, 3000, []int64{1500, 1500}},                 // not a multiple of the batch size
		{3000, 7001, []int64{3000, 3000, 1001}},           // several batches per group
		{batchRows, batchRows + 1, []int64{batchRows, 1}}, // exactly one batch
		{0, 10, []int64{10}},                              // default
	} {
		f := pqcheck.Check(t, writeRows(t, p, tc.rows, Options{RowGroupRows: tc.rowGroupRows}), p)
		if !slices.Equal(f.RowGroups, tc.want) {
			t.Errorf("RowGroupRows %d, %d rows: row groups %v, want %v", tc.rowGroupRows, tc.rows, f.RowGroups, tc.want)
		}
		names, err := f.Strings("name")
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != tc.rows {
			t.Errorf("read %d names, want %d", len(names), tc.rows)
		}
	}
}

func TestCodecs(t *testing.T) {
	p := testProjection()
	for _, tc := range []struct {
		codec exporter.Codec
		want  string
	}{
		{"", "SNAPPY"},
		{exporter.Snappy, "SNAPPY"},
		{exporter.Zstd, "ZSTD"},
		{exporter.Gzip, "GZIP"},
	} {
		t.Run(string(tc.codec), func(t *testing.T) {
			b := writeRows(t, p, 3000, Options{Codec: tc.codec, RowGroupRows: 1000})
			f := pqcheck.Check(t, b, p)
			if got := f.Codecs(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("codecs %v, want [%s]", got, tc.want)
			}
			sums, err := f.SumBy("properties.namespace", "totalCost")
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) == 0 {
				t.Error("no data read back")
			}
			t.Logf("%s: %d bytes for 3000 rows", tc.want, len(b))
		})
	}
}

func TestEmptyFile(t *testing.T) {
	p := testProjection()
	f := pqcheck.Check(t, writeRows(t, p, 0, Options{}), p)
	if f.NumRows != 0 || len(f.RowGroups) != 0 {
		t.Errorf("rows %d, row groups %v; want an empty file", f.NumRows, f.RowGroups)
	}
}

func TestNoLabels(t *testing.T) {
	p := schema.NewProjection(testClusterID, testClusterName, nil, nil)
	f := pqcheck.Check(t, writeRows(t, p, 10, Options{}), p)
	if got, want := len(f.Columns), len(schema.Base())+schema.NumExtra; got != want {
		t.Errorf("%d columns, want %d", got, want)
	}
}

// The caller may reuse a record as soon as Write returns: the writer
// keeps none of its fields or slices, only the bytes of its strings, which
// Go never changes.
func TestDoesNotRetainRecord(t *testing.T) {
	p := testProjection()
	var out bytes.Buffer
	w, err := NewWriter(&out, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.NewRecord()
	r.Name = "first-name"
	r.Labels[p.LabelSlot("team")] = "first"
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	p.Reset(r)
	r.Name = "second"
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := pqcheck.Check(t, out.Bytes(), p)
	names, _ := f.Strings("name")
	teams, _ := f.Strings("properties.labels.team")
	if !slices.Equal(names, []string{"first-name", "second"}) || !slices.Equal(teams, []string{"first", ""}) {
		t.Errorf("names %q teams %q", names, teams)
	}
}

func TestOptionsErrors(t *testing.T) {
	p := testProjection()
	if _, err := NewWriter(&bytes.Buffer{}, p, Options{Codec: "lz4"}); err == nil || !strings.Contains(err.Error(), "lz4") {
		t.Errorf("unknown codec: err = %v", err)
	}
	if _, err := NewWriter(&bytes.Buffer{}, p, Options{RowGroupRows: -1}); err == nil {
		t.Error("negative RowGroupRows accepted")
	}
	dup := schema.NewProjection(testClusterID, testClusterName, []string{"team", "team"}, nil)
	if _, err := NewWriter(&bytes.Buffer{}, dup, Options{}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate label: err = %v", err)
	}
}

type failWriter struct{ after int }

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(b []byte) (int, error) {
	if w.after -= len(b); w.after < 0 {
		return 0, errDiskFull
	}
	return len(b), nil
}

func TestWriteErrorIsSticky(t *testing.T) {
	p := testProjection()
	w, err := NewWriter(&failWriter{after: 1000}, p, Options{RowGroupRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(p)
	r := p.NewRecord()
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ {
		g.fill(r, i)
		werr = w.Write(r)
	}
	if !errors.Is(werr, errDiskFull) || !strings.HasPrefix(werr.Error(), "parquet: ") {
		t.Fatalf("write error = %v, want a wrapped disk full", werr)
	}
	if err := w.Write(r); !errors.Is(err, errDiskFull) {
		t.Errorf("write after error = %v", err)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("close after error = %v", err)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	p := testProjection()
	var out bytes.Buffer
	w, err := NewWriter(&out, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	size := out.Len()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.Len() != size {
		t.Error("second Close wrote more bytes")
	}
	if err := w.Write(p.NewRecord()); err == nil {
		t.Error("Write after Close succeeded")
	}
}

func TestNaNIsWrittenAsGiven(t *testing.T) {
	// Cleaning NaN is Projection.Finish's job (CONTRACT §4); the writer
	// must not hide a record that skipped it, nor choke on one.
	p := testProjection()
	var out bytes.Buffer
	w, _ := NewWriter(&out, p, Options{})
	r := p.NewRecord()
	r.Num[0] = math.NaN()
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := pqcheck.Check(t, out.Bytes(), p)
	v, _ := f.Doubles("minutes")
	if len(v) != 1 || !math.IsNaN(v[0]) {
		t.Errorf("minutes = %v", v)
	}
}

// A label that is unique per row outgrows its dictionary; parquet-go then
// switches that column chunk to PLAIN pages mid-chunk. Both halves must
// read back.
func TestDictionaryFallback(t *testing.T) {
	const n = 40000
	p := schema.NewProjection(testClusterID, testClusterName, []string{"team"}, nil)
	slot := p.LabelSlot("team")
	value := func(i int) string { return fmt.Sprintf("unique-%058d", i) } // 65 bytes
	var out bytes.Buffer
	w, err := NewWriter(&out, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := p.NewRecord()
	for i := range n {
		p.Reset(r)
		r.Labels[slot] = value(i)
		p.Finish(r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := pqcheck.Check(t, out.Bytes(), p)
	c, _ := f.Column("properties.labels.team")
	if !slices.Contains(c.Encodings, "PLAIN") || !slices.Contains(c.Encodings, "RLE_DICTIONARY") {
		t.Errorf("encodings %v, want a dictionary that fell back to PLAIN", c.Encodings)
	}
	got, err := f.Strings("properties.labels.team")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != value(i) {
			t.Fatalf("row %d = %q, want %q", i, v, value(i))
		}
	}
}

// The page buffers of the open row group live in one temp file that is
// removed as soon as it is created: no file is ever visible in the
// directory, and Close closes it, whether the file is finished or
// abandoned after an error.
func TestPageBufferFilesAreRemoved(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd")
	}
	p := testProjection()
	g := newGen(p)
	r := p.NewRecord()
	for _, out := range []io.Writer{io.Discard, &failWriter{after: 1 << 20}} {
		dir := t.TempDir()
		// One row group of many pages: pages go to the buffers as they fill.
		w, err := NewWriter(out, p, Options{PageBufferDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		sawOpen := false
		for i := 0; i < 20000; i++ {
			g.fill(r, i)
			err := w.Write(r)
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Fatalf("%T: %d files visible in %s while writing", out, len(ents), dir)
			}
			sawOpen = sawOpen || openFilesIn(t, dir) > 0
			if err != nil {
				break
			}
		}
		_ = w.Close()
		if _, failing := out.(*failWriter); !sawOpen && !failing {
			t.Errorf("%T: no page spool open in %s while writing", out, dir)
		}
		if n := openFilesIn(t, dir); n != 0 {
			t.Errorf("%T: %d files in %s still open after Close", out, n, dir)
		}
	}
}

// openFilesIn counts this process's open files that are or were in dir.
func openFilesIn(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}
