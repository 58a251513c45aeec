package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmoke runs the whole harness on a tiny day (about 2k allocations)
// against the real exporter binary: into a directory, into MinIO when
// $MINIO_BIN is set (make test sets it), and the two-day concurrency
// scenario. It asserts what the harness produces, never how fast.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the exporter")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "kubecost-s3-exporter")
	build := exec.Command(goBin, "build", "-o", exe, "github.com/kubecost-s3-exporter/kubecost-s3-exporter/cmd/kubecost-s3-exporter")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build exporter: %v\n%s", err, out)
	}
	sizes, err := ParseSizes("2k")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Exporter:    exe,
		MinIO:       os.Getenv("MINIO_BIN"),
		CacheDir:    filepath.Join(dir, "cache"),
		WorkDir:     filepath.Join(dir, "work"),
		Sizes:       sizes,
		Runs:        1,
		Seed:        1,
		Concurrency: &sizes[0],
		TimeBin:     DefaultTimeBin(),
		Log:         testWriter{t},
	}
	rep, err := runBench(context.Background(), cfg)
	if err != nil {
		t.Fatalf("runBench: %v", err)
	}
	wantScenarios := 3 // dir, concurrency 1 and 2
	if cfg.MinIO != "" {
		wantScenarios++
	}
	if len(rep.Scenarios) != wantScenarios {
		t.Fatalf("%d scenarios, want %d", len(rep.Scenarios), wantScenarios)
	}
	for _, sc := range rep.Scenarios {
		if len(sc.Runs) != 1 {
			t.Fatalf("%s %s: %d runs", sc.Size.Name, sc.Sink, len(sc.Runs))
		}
		r := sc.Runs[0]
		if r.M.MaxRSS < 1<<20 || r.M.Wall <= 0 {
			t.Errorf("%s %s: implausible measurement %+v", sc.Size.Name, sc.Sink, r.M)
		}
		if r.Rows != sc.Allocations() || r.Rows < 1500 {
			t.Errorf("%s %s c=%d: %d rows written, %d allocations in the JSON", sc.Size.Name, sc.Sink, sc.Concurrency, r.Rows, sc.Allocations())
		}
	}
	if len(rep.Sizes) != 1 || len(rep.Sizes[0].Floor) != 1 || rep.Sizes[0].Tokens == 0 {
		t.Errorf("floor not measured: %+v", rep.Sizes)
	}
	md := rep.Markdown()
	for _, s := range []string{"| dir | 2k |", "Targets:", "CONCURRENCY"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
	t.Logf("report:\n%s", md)

	// A second run reuses the rendered day.
	cfg.Concurrency, cfg.MinIO = nil, ""
	cfg.Log = &strings.Builder{}
	if _, err := runBench(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if log := cfg.Log.(*strings.Builder).String(); !strings.Contains(log, "reusing") || strings.Contains(log, "rendering") {
		t.Errorf("second run did not reuse the cache:\n%s", log)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
