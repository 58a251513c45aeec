package bench

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// BenchmarkEndToEnd runs the exporter's `run` in-process (cli.RunWith)
// against a pre-rendered day served over loopback, into a directory: the
// same path as make bench, minus process start, but profilable:
//
//	go test ./internal/bench -run '^$' -bench 'EndToEnd/120k' -benchtime 3x -cpuprofile cpu.out
//	KSE_BENCH_HEAP_AT=5s go test ./internal/bench -run '^$' -bench 'EndToEnd/1M' -benchtime 1x
//
// KSE_BENCH_HEAP_AT=D writes $TMPDIR/kse-bench-heap.pprof D into the first run: the live heap
// at steady state, which a -memprofile taken at the end cannot show. The 1M
// size runs only with KSE_BENCH_LARGE=1 (it renders 2.5 GB, once, into
// .cache/bench/gobench). The simulator shares the process, so profiles
// include its file copy (io.Copy, syscalls) as well as the exporter.
func BenchmarkEndToEnd(b *testing.B) {
	// As the command's main does; the benchmark owns its process.
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(cli.GCPercent))
	}
	sizes, _ := ParseSizes("24k,120k,1M")
	for _, size := range sizes {
		b.Run(size.Name, func(b *testing.B) {
			if size.Target >= large && os.Getenv("KSE_BENCH_LARGE") != "1" {
				b.Skip("set KSE_BENCH_LARGE=1 for the 1M day")
			}
			benchEndToEnd(b, size)
		})
	}
}

func benchEndToEnd(b *testing.B, size Size) {
	// A fixed clock: the same day every time, so the rendered file is
	// reused across days, unlike make bench, which follows the real clock.
	day := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	now := day.Add(3*24*time.Hour + 12*time.Hour) // day ended 60 hours ago: the window's only day
	simCfg := simConfig(1, size.ContainersPerHour, 30)
	simCfg.Now = func() time.Time { return now }
	fp, err := fingerprint(simCfg)
	if err != nil {
		b.Fatal(err)
	}
	sim := kubecostsim.New(simCfg)
	cache := filepath.Join("..", "..", ".cache", "bench", "gobench")
	d, err := prepareDay(context.Background(), sim, cache, fixtureName(day, size.ContainersPerHour, fp), day, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	sim.AddPrerendered(d.Query, d.File)
	warm([]Day{d})
	srv := httptest.NewServer(sim)
	defer srv.Close()

	env := map[string]string{
		"CLUSTER_ID":            clusterID,
		"KUBECOST_API_ENDPOINT": srv.URL,
		"BACKFILL_PERIOD_DAYS":  strconv.Itoa(backfillOneDay),
		"AGGREGATION":           "container",
		"GRANULARITY":           "hourly",
		"LABELS":                strings.Join(sim.LabelKeys()[:3], ","),
		"ANNOTATIONS":           strings.Join(sim.AnnotationKeys()[:2], ","),
		"LOG_FORMAT":            "json",
	}
	heapAt, _ := time.ParseDuration(os.Getenv("KSE_BENCH_HEAP_AT"))
	b.SetBytes(d.Bytes)
	b.ReportAllocs()
	runs := 0
	for b.Loop() {
		env["OUTPUT_DIR"] = b.TempDir()
		if runs == 0 && heapAt > 0 {
			stop := heapProfileAfter(b, heapAt, filepath.Join(os.TempDir(), "kse-bench-heap.pprof"))
			defer stop()
		}
		var log strings.Builder
		code := cli.RunWith(context.Background(), func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		}, &log, cli.Hooks{Now: func() time.Time { return now }})
		if code != 0 {
			b.Fatalf("exit %d:\n%s", code, log.String())
		}
		runs++
	}
	b.ReportMetric(float64(d.Allocations)*float64(runs)/b.Elapsed().Seconds(), "allocations/s")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-sys-MiB")
}

// heapProfileAfter writes a heap profile to path after d, unless the
// returned stop is called first.
func heapProfileAfter(b *testing.B, d time.Duration, path string) (stop func()) {
	t := time.AfterFunc(d, func() {
		f, err := os.Create(path)
		if err != nil {
			b.Error(err)
			return
		}
		defer f.Close()
		runtime.GC() // the live heap, not garbage awaiting collection
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Error(err)
		}
		b.Logf("heap profile written to %s after %s", path, d)
	})
	return func() { t.Stop() }
}
