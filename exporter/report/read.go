// Package report reads an archive of day files back from an ObjectStore and renders one
// self-contained HTML page: cost over time, top workloads, efficiency, cost by label and a
// completeness calendar. It reads only the columns it charts, one row group at a time, so
// memory stays flat however large the archive.
package report

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Reader is what the report needs of an object store.
type Reader = exporter.Reader

// Options selects what the report covers.
type Options struct {
	Store Reader

	Prefix   string    // S3_PREFIX of the archive, "" or ending in /
	From, To time.Time // inclusive UTC days; zero From = the oldest stored day, zero To = the newest
	Clusters []string  // EKS cluster names; empty = every cluster found
	// Today, BackfillDays and Settle are the exporter's window (exporter.Window): a day after
	// its last is pending. Defaults: now and the exporter's.
	Today        time.Time
	BackfillDays int
	Settle       time.Duration
	// KubecostRetentionDays is how many days before Today Kubecost holds: the archive cannot
	// say which days Kubecost had, so an absent day older than this is "no Kubecost data", a
	// younger one "missing". Default 15, Kubecost's.
	KubecostRetentionDays int
	// KubecostDays, when set, are the days Kubecost holds per cluster, as the run asked it:
	// an unarchived day is then "missing" when Kubecost holds it, else "no Kubecost data"
	// (KubecostRetentionDays is not used).
	KubecostDays map[ClusterRef]map[time.Time]bool
	// Scope, when set, is the run's clusters: only their partitions are listed and their
	// files read, as a writer role may (its own account_id=/region= prefix and cluster's
	// files). Empty: the whole archive.
	Scope []exporter.Layout
	// Currency is printed with every amount; the files have none (Kubecost's allocation API
	// has no currency field). Default USD.
	Currency string
	TempDir  string // where objects without random access are spooled
	Logger   *slog.Logger
	// Bill, when set, adds the comparison with the bill (compare.go), reading the archive's
	// files again for its columns (split.go).
	Bill *Bill
}

// DefaultKubecostRetentionDays is Kubecost's default ETL retention of daily allocations.
const DefaultKubecostRetentionDays = 15

// File is one day file of the archive.
type File struct {
	Key, Account, Region, Cluster string
	Day                           time.Time
}

// Ref is the file's cluster: its account_id= and region= partitions and file name's cluster.
func (f File) Ref() ClusterRef { return ClusterRef{f.Account, f.Region, f.Cluster} }

// ParseKey recognises an archive key (exporter.ParseKey, the one grammar).
func ParseKey(key string) (File, bool) {
	k, ok := exporter.ParseKey(key)
	if !ok {
		return File{}, false
	}
	return File{Key: key, Account: k.Account, Region: k.Region, Cluster: k.Cluster, Day: k.Day}, true
}

// listPrefixes are the prefixes listed: the archive's, or each partition of Scope once.
func (o Options) listPrefixes() []string {
	if len(o.Scope) == 0 {
		return []string{o.Prefix}
	}
	var out []string
	for _, l := range o.Scope {
		out = append(out, l.PartitionPrefix())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// inScope reports whether f is a file of a cluster of o.Scope (any file without a Scope).
func (o Options) inScope(f File) bool {
	return len(o.Scope) == 0 || slices.ContainsFunc(o.Scope, func(l exporter.Layout) bool {
		return l.Account == f.Account && l.Region == f.Region && l.Cluster == f.Cluster
	})
}

// listFiles returns the files o selects, sorted by key, and o.Clusters as the archive holds
// them (each account and region with a file of that name, any day). A cluster of o.Clusters
// without any file is an UnknownClusterError.
func listFiles(ctx context.Context, o Options) ([]File, []ClusterRef, error) {
	var files []File
	var asked []ClusterRef
	seen := map[string]bool{}
	var err error
	for _, prefix := range o.listPrefixes() {
		err = cmp.Or(err, o.Store.List(ctx, prefix, "", func(oi exporter.ObjectInfo) error {
			f, ok := ParseKey(strings.TrimPrefix(oi.Key, o.Prefix))
			if !ok || !o.inScope(f) {
				return nil
			}
			f.Key = oi.Key
			seen[f.Cluster] = true
			if len(o.Clusters) > 0 && !slices.Contains(o.Clusters, f.Cluster) {
				return nil
			}
			if len(o.Clusters) > 0 && !slices.Contains(asked, f.Ref()) {
				asked = append(asked, f.Ref())
			}
			if (!o.From.IsZero() && f.Day.Before(o.From)) || (!o.To.IsZero() && f.Day.After(o.To)) {
				return nil
			}
			files = append(files, f)
			return nil
		}))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("report: list %q: %w", o.Prefix, err)
	}
	var unknown []string
	for _, c := range o.Clusters {
		if !seen[c] {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) > 0 {
		return nil, nil, &UnknownClusterError{Unknown: unknown, Known: slices.Sorted(maps.Keys(seen))}
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Key, b.Key) })
	return files, asked, nil
}

// The columns the report reads, named by the schema package (a name it lacks panics at start,
// in every test); label columns are found by prefix.
var (
	colName           = schema.Base()[0].Name
	colNamespace      = propColumn(schema.PropNamespace)
	colController     = propColumn(schema.PropController)
	colControllerKind = propColumn(schema.PropControllerKind)
	colCPUCost        = doubleColumn("cpuCost")
	colRAMCost        = doubleColumn("ramCost")
	colCPUEff         = doubleColumn("cpuEfficiency")
	colRAMEff         = doubleColumn("ramEfficiency")
	colTotal          = doubleColumn("totalCost")
)

func propColumn(i int) string { return "properties." + schema.PropName(i) }

func doubleColumn(name string) string {
	if schema.DoubleIndex(name) < 0 {
		panic("report: the schema has no column " + name)
	}
	return name
}

// Names of the rows without a namespace, as Kubecost's UI aggregates by namespace: idle cost
// (capacity no allocation claimed) is "Idle"; other rows keep their name's marker
// (__shared__, __unmounted__) or are __unallocated__.
const (
	Idle        = "Idle"
	Unallocated = schema.UnallocatedName
)

// NamespaceOf is the report's (and summary's) namespace of a row's properties.namespace and name.
func NamespaceOf(namespace, name string) string {
	if namespace != "" {
		return namespace
	}
	switch last := name[strings.LastIndexByte(name, '/')+1:]; last {
	case schema.IdleName:
		return Idle
	case schema.SharedName, schema.UnmountedName, Unallocated:
		return last
	}
	return Unallocated
}

// row is the projection of one allocation the report aggregates.
type row struct {
	namespace, controller, kind string // namespace as NamespaceOf names it
	cpuCost, ramCost            float64
	cpuEff, ramEff, total       float64
	labels                      []string // parallel to the file's label columns
}

// scanFile calls fn for every row of the file at key (see scan).
func scanFile(ctx context.Context, o Options, key string, fn func(labelKeys []string, r *row)) (int64, error) {
	obj, err := exporter.OpenAt(ctx, o.Store, key, o.TempDir, "kubecost-s3-exporter-report-*.parquet")
	if err != nil {
		return 0, err
	}
	defer obj.Close()
	return scan(ctx, obj, obj.Size, fn)
}

// NamespaceCosts adds every row's totalCost of the Parquet file in ra to byNS by NamespaceOf:
// the summary command's reader, so both print the same names and sums.
func NamespaceCosts(ctx context.Context, ra io.ReaderAt, size int64, byNS map[string]float64) (rows int64, total float64, err error) {
	rows, err = scan(ctx, ra, size, func(_ []string, r *row) {
		byNS[r.namespace] += r.total
		total += r.total
	})
	return rows, total, err
}

// columns indexes pf's flat columns by name and finds its label columns (keys and indexes).
func columns(pf *parquet.File) (idx map[string]int, labelKeys []string, labelCols []int, err error) {
	idx = map[string]int{}
	for i, path := range pf.Schema().Columns() {
		// Flat columns only (their names hold the dots); the appended MAP and LIST columns have
		// nested leaf paths and are not drawn.
		if len(path) != 1 {
			continue
		}
		name := path[0]
		idx[name] = i
		if k, ok := strings.CutPrefix(name, schema.LabelPrefix); ok {
			labelKeys = append(labelKeys, k)
			labelCols = append(labelCols, i)
		}
	}
	for _, c := range []string{colNamespace, colTotal} {
		if _, ok := idx[c]; !ok {
			return nil, nil, nil, fmt.Errorf("not an exporter file: no %s column", c)
		}
	}
	return idx, labelKeys, labelCols, nil
}

// scan reads the report's columns of a Parquet file, one row group at a time.
func scan(ctx context.Context, ra io.ReaderAt, size int64, fn func(labelKeys []string, r *row)) (int64, error) {
	pf, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, err
	}
	idx, labelKeys, labelCols, err := columns(pf)
	if err != nil {
		return 0, err
	}
	var rows int64
	r := row{labels: make([]string, len(labelCols))}
	// Namespaces, controllers and label values repeat: interning (per file) spares an
	// allocation per value.
	intern := map[string]string{}
	str1 := func(v parquet.Value) string {
		b := v.ByteArray()
		if s, ok := intern[string(b)]; ok {
			return s
		}
		s := string(b)
		intern[s] = s
		return s
	}
	// Of the name only a last-element marker (__idle__, ...) matters to NamespaceOf; names are
	// nearly unique, so they are neither kept nor interned.
	marker := func(v parquet.Value) string {
		b := v.ByteArray()
		if b = b[bytes.LastIndexByte(b, '/')+1:]; bytes.HasPrefix(b, []byte("__")) {
			return str1(parquet.ByteArrayValue(b))
		}
		return ""
	}
	for _, rg := range pf.RowGroups() {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		n := int(rg.NumRows())
		chunks := rg.ColumnChunks()
		var errs []error
		get := func(v []string, err error) []string { errs = append(errs, err); return v }
		str := func(name string) []string { return get(readNamed(chunks, idx, name, n, str1)) }
		num := func(name string) []float64 {
			v, err := readNamed(chunks, idx, name, n, parquet.Value.Double)
			errs = append(errs, err)
			return v
		}
		ns, names, ctl, kind := str(colNamespace), get(readNamed(chunks, idx, colName, n, marker)), str(colController), str(colControllerKind)
		cpu, ram, cpuE, ramE, tot := num(colCPUCost), num(colRAMCost), num(colCPUEff), num(colRAMEff), num(colTotal)
		labels := make([][]string, len(labelCols))
		for j, c := range labelCols {
			labels[j] = get(readColumn(chunks[c], n, str1))
		}
		if err := errors.Join(errs...); err != nil {
			return rows, err
		}
		for i := range n {
			r.namespace, r.controller, r.kind = NamespaceOf(ns[i], names[i]), ctl[i], kind[i]
			r.cpuCost, r.ramCost, r.cpuEff, r.ramEff, r.total = cpu[i], ram[i], cpuE[i], ramE[i], tot[i]
			for j := range labels {
				r.labels[j] = labels[j][i]
			}
			fn(labelKeys, &r)
		}
		rows += int64(n)
	}
	return rows, nil
}

// readNamed reads the named column; an older file without it reads zero values (the contract).
func readNamed[T any](chunks []parquet.ColumnChunk, idx map[string]int, name string, n int, conv func(parquet.Value) T) ([]T, error) {
	i, ok := idx[name]
	if !ok {
		return make([]T, n), nil
	}
	return readColumn(chunks[i], n, conv)
}

// readColumn decodes one column chunk; a null reads as the zero value (the contract's "0 when
// missing" and "" when missing).
func readColumn[T any](cc parquet.ColumnChunk, n int, conv func(parquet.Value) T) ([]T, error) {
	out := make([]T, 0, n)
	// The reader releases a page once read; conv copies what it keeps before the next read.
	vr := parquet.NewColumnChunkValueReader(cc)
	defer vr.Close()
	buf := make([]parquet.Value, 1024)
	for {
		k, err := vr.ReadValues(buf)
		for _, v := range buf[:k] {
			if v.IsNull() {
				var zero T
				out = append(out, zero)
			} else {
				out = append(out, conv(v))
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("column %d: %d values for %d rows", cc.Column(), len(out), n)
	}
	return out, nil
}
