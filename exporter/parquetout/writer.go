// Package parquetout writes allocation records as a typed Parquet file
// that follows the column contract (CONTRACT §4) exactly: the columns of
// schema.Projection.Columns, in that order, with the stated types.
//
// The writer streams: rows are buffered column by column in small batches
// and a row group is flushed every Options.RowGroupRows rows, so memory
// stays bounded however large the day is.
package parquetout

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// DefaultRowGroupRows is the default row group size. 64k rows is a few MB
// compressed: large enough for good compression and for Athena to skip row
// groups by statistics, small enough to keep the writer's memory low.
const DefaultRowGroupRows = 64 * 1024

// Metadata keys written in every file's key/value metadata.
const (
	MetaExporterVersion = "kubecost_s3_exporter.version"
	MetaSchemaVersion   = "kubecost_s3_exporter.schema_version"
)

const (
	// batchRows is how many rows are buffered before they are handed to
	// parquet-go column by column. Handing over whole batches amortises
	// parquet-go's per-call work. 256 rows (about 0.4 MB of values for 60
	// columns) measured faster per CPU second than 1024 (the batch stays in
	// cache) and take 1.4 MB less heap; pages end on slightly different
	// rows, which made files 0.5% larger.
	batchRows = 256
	// dictionaryMaxBytes makes a column chunk fall back from dictionary to
	// PLAIN encoding once its dictionary passes this size, as pyarrow does
	// (its dictionary_pagesize_limit is also 1 MiB). It only matters for a
	// label that turns out to be unique per row.
	dictionaryMaxBytes = 1 << 20
	// pageBufferSize is the uncompressed page size parquet-go aims for.
	// Every column holds one page buffer plus the compressed pages of the
	// current row group, so this sets most of the writer's memory: 64 KiB
	// instead of parquet-go's 256 KiB halved the live heap (about 40 to 18
	// MB) for files under 2% larger.
	pageBufferSize = 64 << 10
)

// Options configure a Writer. The zero value is valid.
type Options struct {
	// Codec is the compression codec: exporter.Snappy (default), Zstd or Gzip.
	Codec exporter.Codec
	// RowGroupRows is the number of rows per row group; 0 means
	// DefaultRowGroupRows.
	RowGroupRows int
	// Metadata is extra key/value metadata for the file footer. It may
	// override the MetaExporterVersion and MetaSchemaVersion defaults.
	Metadata map[string]string
	// PageBufferDir is where the compressed pages of the row group being
	// written wait until the row group is complete: one temp file for all
	// columns per writer, removed from its directory as soon as it is
	// created (spool.go). "" means os.TempDir(), where the exporter also
	// spools its day files.
	PageBufferDir string

	// noDictionary writes every string column PLAIN; benchmarks use it to
	// measure what dictionary encoding costs and saves.
	noDictionary bool
}

// Writer writes records to one Parquet file. It is not safe for concurrent use.
type Writer struct {
	pw    *parquet.GenericWriter[any]
	spool *spoolPool
	p     *schema.Projection
	// Where each Record field goes, by source kind, so that Write runs one
	// tight loop per kind instead of a type switch per value.
	slots     [srcExtra][]slot
	leafNames []string // leaf column names, for errors

	rgRows  int // row group size
	inGroup int // rows already handed to parquet-go in the current row group
	rows    int64
	err     error // sticky: parquet-go leaves a writer unusable after an error
	closed  bool

	// The batch: column c's values for rows 0..n-1 live in
	// vals[c*batchRows : c*batchRows+n]. Byte-array values point at the
	// bytes of the record's strings: Go strings never change, so the
	// caller may reuse r (its slices, its fields) as soon as Write
	// returns, and parquet-go copies the bytes when the batch is flushed.
	// Copying them here first, as this writer once did, cost about a
	// tenth of its CPU.
	vals []parquet.Value
	n    int

	// The appended columns: flat is the number of CCA columns (one leaf
	// each, first in the file); nested[i] holds the batch's values of leaf
	// flat+i with their levels, as many per row as the row has entries.
	flat   int
	extras []nestedCol
	nested [][]parquet.Value
}

// NewWriter starts a Parquet file on out with the columns of p. Nothing is
// written to out until the first row group is flushed or Close is called.
func NewWriter(out io.Writer, p *schema.Projection, opts Options) (*Writer, error) {
	if out == nil || p == nil {
		return nil, errors.New("parquet: nil writer or projection")
	}
	rgRows := opts.RowGroupRows
	switch {
	case rgRows == 0:
		rgRows = DefaultRowGroupRows
	case rgRows < 0:
		return nil, fmt.Errorf("parquet: RowGroupRows must be positive, got %d", rgRows)
	}
	cols, srcs, err := plan(p)
	if err != nil {
		return nil, err
	}
	options, spool, err := writerOptions(cols, opts)
	if err != nil {
		return nil, err
	}
	pw := parquet.NewGenericWriter[any](out, options...)
	meta := map[string]string{
		MetaExporterVersion: exporter.Version,
		MetaSchemaVersion:   schema.Version,
	}
	maps.Copy(meta, opts.Metadata)
	// Keys are set one by one, sorted, so the footer is byte-for-byte
	// reproducible for the same input.
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		pw.SetKeyValueMetadata(k, meta[k])
	}
	w := &Writer{
		pw:     pw,
		spool:  spool,
		p:      p,
		rgRows: rgRows,
		vals:   make([]parquet.Value, len(cols)*batchRows), // a little more than the flat columns need
	}
	if err := w.place(cols, srcs); err != nil {
		return nil, err
	}
	return w, nil
}

// writerOptions returns parquet-go's options for the columns, validated.
// The options, not a config built from them, go to NewGenericWriter: a
// *WriterConfig given as an option is merged into parquet-go's defaults
// with boolean OR, which turned DataPageStatistics back on.
func writerOptions(cols []schema.Column, opts Options) ([]parquet.WriterOption, *spoolPool, error) {
	codec, err := codecFor(opts.Codec)
	if err != nil {
		return nil, nil, err
	}
	dict := dictionaryFor
	if opts.noDictionary {
		dict = func(schema.Column) bool { return false }
	}
	sch, err := buildSchema(cols, dict)
	if err != nil {
		return nil, nil, err
	}
	options := []parquet.WriterOption{
		sch,
		parquet.Compression(codec),
		// Version 1 data pages are what pyarrow writes by default and what
		// every Athena, Glue and Spark version reads.
		parquet.DataPageVersion(1),
		parquet.DictionaryMaxBytes(dictionaryMaxBytes),
		parquet.PageBufferSize(pageBufferSize),
		// Page header statistics are deprecated in favour of the column
		// index, which parquet-go still writes along with the column chunk
		// statistics; Athena and Spark use those, not the page headers.
		// Turning them off saves computing every page's min and max twice.
		parquet.DataPageStatistics(false),
		&parquet.WriterConfig{CreatedBy: "kubecost-s3-exporter version " + exporter.Version},
	}
	// Without this, a row group's compressed pages (64k rows are about
	// 9 MB) sit on the heap until it is flushed, and the GC doubles
	// that: peak memory grew with the day until the first row group was
	// full. In files they cost page cache, not process memory, and the
	// row groups stay as large as Athena likes them. See
	// docs/performance.md for the measurements.
	spool := &spoolPool{dir: cmp.Or(opts.PageBufferDir, os.TempDir()), pattern: "kubecost-s3-exporter-pages-*"}
	options = append(options, parquet.ColumnPageBuffers(spool))
	for _, path := range sch.Columns() {
		// Min and max of map keys, list elements and struct fields say
		// nothing a query engine can skip pages by.
		if x := schema.ExtraIndex(path[0]); x >= 0 && schema.Extras()[x].Type.Nested() {
			options = append(options, parquet.SkipPageBounds(path...))
		}
	}
	// Validated here so a bad option is an error, not a panic in
	// NewGenericWriter.
	if _, err := parquet.NewWriterConfig(options...); err != nil {
		return nil, nil, fmt.Errorf("parquet: writer config: %w", err)
	}
	return options, spool, nil
}

// place records where each column's values come from: the CCA columns
// first, one leaf each, in the batch; then the appended columns, whose
// leaves follow in the file and are buffered in w.nested.
func (w *Writer) place(cols []schema.Column, srcs []source) error {
	for c, s := range srcs {
		if s.kind == srcExtra {
			nc := nestedCol{x: s.index, typ: cols[c].Type, slot: len(w.nested)}
			for _, f := range cols[c].Fields {
				nc.ftyps = append(nc.ftyps, f.Type)
			}
			for i := range leaves(cols[c]) {
				w.nested = append(w.nested, nil)
				w.leafNames = append(w.leafNames, fmt.Sprintf("%s[%d]", cols[c].Name, i))
			}
			w.extras = append(w.extras, nc)
			continue
		}
		if len(w.extras) > 0 {
			return fmt.Errorf("parquet: CCA column %q after an appended column", cols[c].Name)
		}
		w.flat++
		w.leafNames = append(w.leafNames, cols[c].Name)
		w.slots[s.kind] = append(w.slots[s.kind], slot{off: c * batchRows, idx: s.index})
	}
	return nil
}

// slot places one Record field: off is the start of its column in the
// batch, idx the field's index (into Num, Props, LABELS or ANNOTATIONS).
type slot struct{ off, idx int }

// Write appends one row. It keeps nothing of r but the bytes of its
// strings, so the caller may reuse r as soon as Write returns; as Go
// requires of every string, those bytes must never change (no unsafe
// views of a reused buffer).
func (w *Writer) Write(r *schema.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("parquet: write after close")
	}
	v, n := w.vals, w.n
	for _, s := range w.slots[srcName] {
		v[s.off+n] = str(r.Name)
	}
	for _, s := range w.slots[srcStart] {
		v[s.off+n] = parquet.Int64Value(r.Start)
	}
	for _, s := range w.slots[srcEnd] {
		v[s.off+n] = parquet.Int64Value(r.End)
	}
	for _, s := range w.slots[srcNum] {
		v[s.off+n] = parquet.DoubleValue(r.Num[s.idx])
	}
	for _, s := range w.slots[srcProp] {
		v[s.off+n] = str(r.Props[s.idx])
	}
	for _, s := range w.slots[srcLabel] {
		v[s.off+n] = str(w.p.UserLabel(r, s.idx))
	}
	for _, s := range w.slots[srcAnnotation] {
		v[s.off+n] = str(w.p.UserAnnotation(r, s.idx))
	}
	for i := range w.extras {
		w.shred(&w.extras[i], &r.X[w.extras[i].x])
	}
	w.n++
	w.rows++
	if w.n == batchRows || w.inGroup+w.n == w.rgRows {
		return w.flushBatch()
	}
	return nil
}

// str returns a value that points at the bytes of s, which parquet-go
// only reads. The value keeps them alive until the batch is flushed.
func str(s string) parquet.Value {
	if len(s) == 0 {
		return parquet.ByteArrayValue(nil)
	}
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// flushBatch hands the buffered rows to parquet-go, column by column, and
// closes the row group when it is full. parquet-go copies the values into
// its page buffers, so the batch is free for reuse afterwards.
func (w *Writer) flushBatch() error {
	if w.n == 0 {
		return nil
	}
	n := w.n
	for c, cw := range w.pw.ColumnWriters() {
		var vals []parquet.Value
		if c < w.flat {
			vals = w.vals[c*batchRows : c*batchRows+n]
		} else {
			vals = w.nested[c-w.flat]
			w.nested[c-w.flat] = vals[:0]
		}
		if _, err := cw.WriteRowValues(vals); err != nil {
			return w.fail(fmt.Errorf("parquet: write column %s: %w", w.leafNames[c], err))
		}
		// Drop the pointers to strings so the batch does not keep them.
		clear(vals)
	}
	w.n = 0
	w.inGroup += n
	if w.inGroup >= w.rgRows {
		if err := w.pw.Flush(); err != nil {
			return w.fail(fmt.Errorf("parquet: write row group: %w", err))
		}
		w.inGroup = 0
	}
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// Rows returns the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// Close flushes the last row group and writes the footer. It does not
// close the underlying io.Writer: the caller decides whether the file is
// complete (upload, rename) or discarded. Close is idempotent.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	err := w.err
	if err == nil {
		err = w.flushBatch()
	}
	if err == nil {
		if err = w.pw.Close(); err != nil {
			err = w.fail(fmt.Errorf("parquet: write footer: %w", err))
		}
	}
	if err != nil {
		// The file cannot be finished: hand the page buffers of its
		// unfinished row group back to their pool.
		w.pw.Reset(io.Discard)
	}
	// The page spool's file has no name left; closing it frees it.
	_ = w.spool.close()
	return err
}
