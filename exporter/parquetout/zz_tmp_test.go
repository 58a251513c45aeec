package parquetout

import (
	"runtime"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

func TestTmpHeap(t *testing.T) {
	p := testProjection()
	recs := benchRecords(p, 200_000)
	for _, c := range exporter.Codecs() {
		var out countingWriter
		w, _ := NewWriter(&out, p, Options{Codec: c})
		var ru0 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ru0)
		t0, _ := cpuTime()
		for i := range recs {
			w.Write(&recs[i])
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.Close()
		t1, _ := cpuTime()
		t.Logf("%s: live heap delta %.1f MB, %.1f B/row, cpu %v", c, float64(ms.HeapAlloc-ru0.HeapAlloc)/(1<<20), float64(out.n)/float64(len(recs)), t1-t0)
	}
}
