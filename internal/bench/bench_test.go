package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain doubles as a child process for the Runner tests: with
// KSE_BENCH_HELPER_MIB=N it touches N MiB and exits with status 3.
func TestMain(m *testing.M) {
	if v := os.Getenv("KSE_BENCH_HELPER_MIB"); v != "" {
		n, _ := strconv.Atoi(v)
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		os.Stdout.WriteString("touched\n")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestRunnerMeasuresPeakRSS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeBin string
	}{{"direct", ""}, {"time -v", DefaultTimeBin()}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "time -v" && tc.timeBin == "" {
				t.Skip("GNU /usr/bin/time not installed")
			}
			log := filepath.Join(t.TempDir(), "child.log")
			m, err := Runner{TimeBin: tc.timeBin}.Run(context.Background(), []string{os.Args[0]},
				[]string{"KSE_BENCH_HELPER_MIB=64"}, log)
			if err != nil {
				t.Fatal(err)
			}
			if m.ExitCode != 3 {
				t.Errorf("exit code %d, want 3", m.ExitCode)
			}
			if m.MaxRSS < 64<<20 || m.MaxRSS > 1<<30 {
				t.Errorf("MaxRSS %d bytes, want at least the 64 MiB touched", m.MaxRSS)
			}
			if m.Wall <= 0 {
				t.Errorf("wall %v", m.Wall)
			}
			if b, _ := os.ReadFile(log); !strings.Contains(string(b), "touched") {
				t.Errorf("child output not captured: %q", b)
			}
			if tc.timeBin != "" {
				if m.TimeVRSS < 64<<20 {
					t.Errorf("time -v RSS %d, want >= 64 MiB; report:\n%s", m.TimeVRSS, m.TimeV)
				}
				if !strings.Contains(TimeVBrief(m.TimeV), "Maximum resident set size") {
					t.Errorf("brief lacks the RSS line: %q", TimeVBrief(m.TimeV))
				}
			}
		})
	}
}

func TestParseTimeV(t *testing.T) {
	out := "\tCommand being timed: \"x\"\n\tUser time (seconds): 1.50\n" +
		"\tMaximum resident set size (kbytes): 52340\n\tExit status: 0\n"
	got, err := ParseTimeV(out)
	if err != nil || got != 52340*1024 {
		t.Fatalf("ParseTimeV = %d, %v", got, err)
	}
	if _, err := ParseTimeV("Command exited with non-zero status 1\n"); err == nil {
		t.Error("want an error without the RSS line")
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("24k, 120k,1M,2000")
	if err != nil {
		t.Fatal(err)
	}
	want := []Size{{"24k", 24000, 1000}, {"120k", 120000, 5000}, {"1M", 1000000, 41667}, {"2000", 2000, 83}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("size %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "x", "-1k", "10", "6M"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q): want an error", bad)
		}
	}
}

func TestMedian(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{3 * s}, 3 * s}, {[]time.Duration{5 * s, 1 * s, 3 * s}, 3 * s}, {[]time.Duration{4 * s, 1 * s}, 2500 * time.Millisecond}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// fakeReport is a report with chosen numbers: wall seconds and peak RSS
// MiB per (size, sink), a 1 s floor everywhere.
func fakeReport(rss map[string]float64, wall map[string]float64) *Report {
	r := &Report{Runs: 1, Machine: Machine{CPUs: 2}}
	sizes, _ := ParseSizes("24k,120k,1M")
	for _, sz := range sizes {
		day := Day{Bytes: int64(sz.Target) * 2400, Allocations: int64(sz.Target)}
		r.Sizes = append(r.Sizes, SizeResult{Size: sz, Day: day, Floor: []time.Duration{time.Second}})
		for _, sink := range []string{"dir", "minio"} {
			k := sz.Name + "/" + sink
			r.Scenarios = append(r.Scenarios, &Scenario{Size: sz, Sink: sink, Concurrency: 1, Days: []Day{day},
				Runs: []Run{{M: Measurement{Wall: time.Duration(wall[k] * float64(time.Second)), MaxRSS: int64(rss[k] * (1 << 20))},
					Rows: int64(sz.Target)}}})
		}
	}
	return r
}

func TestChecks(t *testing.T) {
	rss := map[string]float64{"24k/dir": 40, "120k/dir": 45, "1M/dir": 50, "24k/minio": 40, "120k/minio": 60, "1M/minio": 160}
	wall := map[string]float64{"24k/dir": 5, "120k/dir": 2, "1M/dir": 2.5, "24k/minio": 5, "120k/minio": 2.6, "1M/minio": 2}
	r := fakeReport(rss, wall)
	got := map[string]bool{}
	for _, c := range r.Checks() {
		if !c.Measured {
			t.Errorf("%s %s not measured", c.Target, c.Sink)
		}
		got[c.Sink+": "+c.Target] = c.Pass
	}
	want := map[string]bool{
		"dir: peak RSS ≤ 150 MiB at every size":        true,
		"dir: peak RSS at 1M ≤ 1.3× peak RSS at 24k":   true, // 1.25×
		"dir: wall ≤ 2.5× tokenize floor at 120k":      true,
		"dir: wall ≤ 2.5× tokenize floor at 1M":        true, // exactly 2.5×
		"minio: peak RSS ≤ 150 MiB at every size":      false,
		"minio: peak RSS at 1M ≤ 1.3× peak RSS at 24k": false,
		"minio: wall ≤ 2.5× tokenize floor at 120k":    false,
		"minio: wall ≤ 2.5× tokenize floor at 1M":      true,
	}
	for k, w := range want {
		if p, ok := got[k]; !ok || p != w {
			t.Errorf("%s: pass=%v (present %v), want %v", k, p, ok, w)
		}
	}
	if !r.Missed() {
		t.Error("Missed() = false with misses")
	}
	md := r.Markdown()
	for _, s := range []string{"| dir | 1M | 1000000 | 2400 | 2.50 | 400000 | 960 | 50.0 |", "**MISS**", "**PASS**"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func TestChecksPartialRun(t *testing.T) {
	sizes, _ := ParseSizes("2k")
	r := &Report{Runs: 1, Sizes: []SizeResult{{Size: sizes[0], Floor: []time.Duration{time.Second}}},
		Scenarios: []*Scenario{{Size: sizes[0], Sink: "dir", Concurrency: 1, Days: []Day{{}},
			Runs: []Run{{M: Measurement{Wall: time.Second, MaxRSS: 30 << 20}}}}}}
	for _, c := range r.Checks() {
		if c.Measured && !strings.Contains(c.Target, "every size") {
			t.Errorf("%q measured on a 2k-only run", c.Target)
		}
	}
	if r.Missed() {
		t.Error("a partial run that passes what it measured reports a miss")
	}
}

func TestWriteDoc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs", "performance.md")
	if err := WriteDoc(path, "| first |\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "| first |") || !strings.Contains(string(b), "327 MB") {
		t.Fatalf("new doc lacks results or the Python baseline:\n%s", b)
	}
	// Prose outside the markers survives; the results are replaced.
	edited := strings.Replace(string(b), "# Performance", "# Performance\n\nHand-written note.", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDoc(path, "| second |"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if s := string(b); !strings.Contains(s, "Hand-written note.") || strings.Contains(s, "| first |") || !strings.Contains(s, "| second |") {
		t.Fatalf("doc after rewrite:\n%s", s)
	}
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDoc(path, "x"); err == nil {
		t.Error("want an error for a doc without markers")
	}
}

func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	names := map[string]bool{ // name -> kept
		fixtureName(day, 1000, "aaa"):                   true,
		fixtureName(day, 1000, "old"):                   false, // other fingerprint, same size
		fixtureName(day.AddDate(0, 0, -1), 5000, "bbb"): false, // a day no run can use again
		fixtureName(day, 42000, "zzz"):                  true,  // a size this run does not use
	}
	for n := range names {
		for _, ext := range []string{".json", ".json.meta"} {
			os.WriteFile(filepath.Join(dir, n+ext), nil, 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, "unrelated.txt"), nil, 0o644)
	pruneCache(dir, day, map[int]string{1000: "aaa", 5000: "bbb"}, t.Logf)
	for n, kept := range names {
		for _, ext := range []string{".json", ".json.meta"} {
			_, err := os.Stat(filepath.Join(dir, n+ext))
			if (err == nil) != kept {
				t.Errorf("%s%s: exists=%v, want %v", n, ext, err == nil, kept)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "unrelated.txt")); err != nil {
		t.Error("pruned a file it does not own")
	}
}

func TestOtherCPU(t *testing.T) {
	t0 := time.Now()
	a := cpuSample{at: t0, busy: 10 * time.Second, ours: 2 * time.Second, ok: true}
	b := cpuSample{at: t0.Add(10 * time.Second), busy: 25 * time.Second, ours: 12 * time.Second, ok: true}
	// 15 s busy, 10 s of it ours: 5 s of 20 s capacity on 2 CPUs.
	if got, ok := otherCPU(a, b, 2); !ok || got != 0.25 {
		t.Errorf("otherCPU = %v, %v; want 0.25", got, ok)
	}
	if _, ok := otherCPU(a, cpuSample{}, 2); ok {
		t.Error("want not ok without /proc/stat")
	}
	if s := sampleCPU(); runtime.GOOS == "linux" && (!s.ok || s.busy <= 0) {
		t.Errorf("sampleCPU on linux: %+v", s)
	}
}
