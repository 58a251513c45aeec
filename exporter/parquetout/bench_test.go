package parquetout

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// countingWriter discards what it is given and counts it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) {
	w.n += int64(len(b))
	return len(b), nil
}

// benchRecords pre-generates n distinct records so that BenchmarkWrite
// measures the writer, not the generator.
func benchRecords(p *schema.Projection, n int) []schema.Record {
	g := newGen(p)
	r := p.NewRecord()
	recs := make([]schema.Record, n)
	for i := range recs {
		g.fill(r, i)
		recs[i] = *r
		recs[i].Labels = slices.Clone(r.Labels)
		recs[i].Annotations = slices.Clone(r.Annotations)
	}
	return recs
}

// inputBytes is the logical size of a record: its strings and numbers as
// they go into the file. b.SetBytes uses it so MB/s reads as input speed.
func inputBytes(p *schema.Projection, r *schema.Record) int64 {
	n := int64(len(r.Name) + 16 + 8*schema.NumDoubles)
	for _, s := range r.Props {
		n += int64(len(s))
	}
	for i := range p.Labels() {
		n += int64(len(p.UserLabel(r, i)))
	}
	for i := range p.Annotations() {
		n += int64(len(p.UserAnnotation(r, i)))
	}
	return n
}

// BenchmarkWrite measures one op = one row written, including the
// writer's share of setup and Close. Extra metrics: rows/s, output
// bytes per row, and heap allocations per 1000 rows (allocs/op rounds to
// 0 when the writer allocates less than once a row).
func BenchmarkWrite(b *testing.B) {
	p := testProjection()
	recs := benchRecords(p, 1<<16)
	var in int64
	for i := range recs {
		in += inputBytes(p, &recs[i])
	}
	for _, codec := range exporter.Codecs() {
		for _, dict := range []bool{true, false} {
			name := string(codec) + "/dict"
			if !dict {
				name = string(codec) + "/plain"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(in / int64(len(recs)))
				b.ReportAllocs()
				var out countingWriter
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				cpu0, cpuOK := cpuTime()
				start := time.Now()
				w, err := NewWriter(&out, p, Options{Codec: codec, noDictionary: !dict})
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; b.Loop(); i++ {
					if err := w.Write(&recs[i%len(recs)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				cpu1, _ := cpuTime()
				runtime.ReadMemStats(&after)
				rows := float64(w.Rows())
				b.ReportMetric(rows/elapsed.Seconds(), "rows/s")
				if cpuOK {
					// Includes GC and any other goroutine of the test binary.
					b.ReportMetric(rows/(cpu1-cpu0).Seconds(), "rows/cpu-s")
				}
				b.ReportMetric(float64(out.n)/rows, "out-B/row")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/rows*1000, "allocs/krow")
			})
		}
	}
}

// dayStats is what writing one big day costs.
type dayStats struct {
	rows, bytes int64
	elapsed     time.Duration
	cpu         time.Duration // process CPU time; 0 where unknown
	peakHeap    uint64        // highest HeapInuse sampled while writing
	baseHeap    uint64        // HeapInuse before the writer existed
}

// writeDay writes rows generated on the fly, sampling HeapInuse every few
// thousand rows. Generation is part of the elapsed time, as it is in the
// real job (the decoder fills records as the writer drains them).
func writeDay(tb testing.TB, p *schema.Projection, rows int, opts Options) dayStats {
	tb.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	st := dayStats{baseHeap: ms.HeapInuse}
	g := newGen(p)
	r := p.NewRecord()
	var out countingWriter
	cpu0, _ := cpuTime()
	start := time.Now()
	w, err := NewWriter(&out, p, opts)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range rows {
		g.fill(r, i)
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
		if i%8192 == 0 {
			runtime.ReadMemStats(&ms)
			st.peakHeap = max(st.peakHeap, ms.HeapInuse)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	st.elapsed = time.Since(start)
	if cpu1, ok := cpuTime(); ok {
		st.cpu = cpu1 - cpu0
	}
	runtime.ReadMemStats(&ms)
	st.peakHeap = max(st.peakHeap, ms.HeapInuse)
	st.rows, st.bytes = w.Rows(), out.n
	return st
}

// A day of a large cluster is about a million container rows. The job
// runs in a pod with a small memory limit, so the writer must not hold the
// day: peak heap has to stay flat whatever the row count.
func TestMillionRowsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a million rows")
	}
	const limit = 100 << 20
	st := writeDay(t, testProjection(), 1_000_000, Options{})
	t.Logf("1M rows snappy: %.1f MB in %v wall, %v CPU incl. generation; peak HeapInuse %.1f MiB (%.1f MiB before)",
		float64(st.bytes)/1e6, st.elapsed.Round(time.Millisecond), st.cpu.Round(time.Millisecond),
		float64(st.peakHeap)/(1<<20), float64(st.baseHeap)/(1<<20))
	if st.peakHeap > limit {
		t.Errorf("peak HeapInuse %d MB, want under %d MB", st.peakHeap>>20, limit>>20)
	}
}

// BenchmarkDay writes a 1M-row day per op with each codec; run it with
// -benchtime=1x. It reports the file size and peak heap.
func BenchmarkDay(b *testing.B) {
	p := testProjection()
	for _, codec := range exporter.Codecs() {
		b.Run(string(codec), func(b *testing.B) {
			var st dayStats
			for b.Loop() {
				st = writeDay(b, p, 1_000_000, Options{Codec: codec})
			}
			b.ReportMetric(float64(st.bytes)/1e6, "MB/day")
			b.ReportMetric(float64(st.peakHeap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(st.elapsed.Seconds(), "s/day")
			b.ReportMetric(st.cpu.Seconds(), "cpu-s/day")
		})
	}
}

func ExampleWriter() {
	p := schema.NewProjection("arn:aws:eks:us-east-1:111122223333:cluster/demo", "demo", []string{"team"}, nil)
	var out countingWriter
	w, err := NewWriter(&out, p, Options{Codec: exporter.Zstd})
	if err != nil {
		panic(err)
	}
	r := p.NewRecord()
	r.Name = "demo/node-1/default/web-1/web"
	r.Start, r.End = 1767225600000, 1767225600000+dayMillis
	r.Labels[p.LabelSlot("team")] = "payments"
	p.Finish(r)
	if err := w.Write(r); err != nil { // r may be reused right away
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Println(w.Rows(), "row")
	// Output: 1 row
}
