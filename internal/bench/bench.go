// The benchmark runs the real exporter binary end to
// end against the Kubecost simulator serving pre-rendered days over
// loopback, into a local directory and into MinIO, and compares it with
// the floor: the time merely to tokenize the same JSON.
//
// The simulator is served from this process, but every body is a file copy
// of a day rendered once into the cache, so the exporter is measured, not
// the generator. Each run finds its days missing: the output is emptied
// between runs.

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// Config is one benchmark.
type Config struct {
	Exporter string // kubecost-s3-exporter binary
	MinIO    string // minio binary; "" skips the MinIO sink
	CacheDir string // rendered days, reused across runs
	WorkDir  string // outputs and logs; "" = a temp dir removed at the end
	Sizes    []Size
	Runs     int // runs per size and sink; the median wall time is reported
	Seed     int64
	// Concurrency, when non-nil, adds the CONCURRENCY scenario: two
	// missing days of this size exported with CONCURRENCY=1 and =2.
	Concurrency *Size
	TimeBin     string // "/usr/bin/time" or "" (see Runner)
	// Fleet, when non-nil, adds the federated scenario (FleetSpec).
	Fleet *FleetSpec
	Env   []string // extra exporter environment, e.g. GOGC=50
	Rev   string   // source revision measured, for the report
	Log   io.Writer
}

// Scenario is one exporter configuration measured Runs times.
type Scenario struct {
	Size        Size
	Sink        string // "dir" or "minio"
	Concurrency int
	Days        []Day
	Runs        []Run
	Err         error // the run that failed, if one did; later runs were skipped
}

// Run is one exporter run.
type Run struct {
	M        Measurement
	Rows     int64 // rows in the written files
	OutBytes int64 // bytes of the written files
	Files    int
	Log      string // the exporter's log file
	// ServerCPU is the bench process's CPU time during the run: the
	// simulator copying the day to the socket, sharing the cores with the
	// exporter (a real Kubecost runs elsewhere).
	ServerCPU time.Duration
}

// SizeResult is a size's day and its tokenize floor.
type SizeResult struct {
	Size     Size
	Day      Day
	Floor    []time.Duration
	FloorCPU []time.Duration // user+system time of each floor run
	Tokens   int64
}

// Report is everything one benchmark measured.
type Report struct {
	Machine   Machine
	Rev       string
	Runs      int
	Sizes     []SizeResult
	Scenarios []*Scenario
	Started   time.Time
	Elapsed   time.Duration
	// LoadBefore is the load average when the bench started. OtherCPU is
	// the share of the machine's CPU that other processes (MinIO among
	// them) used during the bench: on a shared machine, other work
	// competes for the 2 cores and makes wall times noisy.
	Fleet         *FleetResult // the federated scenario, when run
	LoadBefore    string
	OtherCPU      float64
	OtherCPUKnown bool
}

const (
	clusterName = "cluster-one" // the simulator's default cluster id
	clusterID   = "arn:aws:eks:us-east-1:111122223333:cluster/" + clusterName
	bucket      = "kse-bench"
	// BACKFILL_PERIOD_DAYS=4 makes the window exactly one day, as in CCA:
	// the latest day that ended at least 48 hours ago. 5 makes it two days.
	backfillOneDay  = 4
	backfillTwoDays = 5
)

type bencher struct {
	cfg    Config
	runner Runner
	work   string
	cur    atomic.Pointer[served]
	url    string
	minio  *minio
	seq    int
}

// runBench runs the benchmark. The report is returned even with an error, so
// what was measured can still be printed.
func runBench(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Runs < 1 {
		cfg.Runs = 1
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	rep := &Report{Machine: DescribeMachine(), Runs: cfg.Runs, Rev: cfg.Rev, Started: time.Now(), LoadBefore: loadAvg()}
	cpu0 := sampleCPU()
	defer func() {
		rep.Elapsed = time.Since(rep.Started)
		rep.OtherCPU, rep.OtherCPUKnown = otherCPU(cpu0, sampleCPU(), rep.Machine.CPUs)
	}()
	b := &bencher{cfg: cfg, runner: Runner{TimeBin: cfg.TimeBin}, work: cfg.WorkDir}
	if b.work == "" {
		dir, err := os.MkdirTemp("", "kse-bench-")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(dir)
		b.work = dir
	}
	if err := os.MkdirAll(filepath.Join(b.work, "tmp"), 0o755); err != nil {
		return rep, err
	}
	stop, err := b.serve()
	if err != nil {
		return rep, err
	}
	defer stop()
	if cfg.MinIO != "" {
		b.logf("starting MinIO (%s)", cfg.MinIO)
		if b.minio, err = startMinIO(ctx, cfg.MinIO, filepath.Join(b.work, "minio")); err != nil {
			return rep, fmt.Errorf("minio: %w", err)
		}
		defer b.minio.Stop()
		if err := b.minio.CreateBucket(ctx, bucket); err != nil {
			return rep, fmt.Errorf("minio: create bucket: %w", err)
		}
	}
	b.prune()

	var failed error
	for _, size := range cfg.Sizes {
		days, err := b.prepare(ctx, size, backfillOneDay)
		if err != nil {
			return rep, err
		}
		rep.Sizes = append(rep.Sizes, SizeResult{Size: size, Day: days[0]})
		sr := &rep.Sizes[len(rep.Sizes)-1]
		warm(days)
		var scs []*Scenario
		for _, sink := range b.sinks() {
			scs = append(scs, &Scenario{Size: size, Sink: sink, Concurrency: 1, Days: days})
		}
		rep.Scenarios = append(rep.Scenarios, scs...)
		// Rounds interleave the floor and the sinks, so that a machine
		// whose load drifts affects the floor and the runs alike.
		for i := range cfg.Runs {
			t, cpu, n, err := tokenizeFloor(days[0].File)
			if err != nil {
				return rep, fmt.Errorf("tokenize floor %s: %w", size.Name, err)
			}
			sr.Floor, sr.FloorCPU, sr.Tokens = append(sr.Floor, t), append(sr.FloorCPU, cpu), n
			b.logf("%s floor %d/%d: %s (CPU %s), %d tokens, %.0f MB/s", size.Name, i+1, cfg.Runs,
				t.Round(time.Millisecond), cpu.Round(time.Millisecond), n, mb(days[0].Bytes)/t.Seconds())
			for _, sc := range scs {
				failed = errors.Join(failed, b.step(ctx, sc, i))
			}
		}
	}
	if c := cfg.Concurrency; c != nil {
		days, err := b.prepare(ctx, *c, backfillTwoDays)
		if err != nil {
			return rep, err
		}
		warm(days)
		scs := []*Scenario{
			{Size: *c, Sink: "dir", Concurrency: 1, Days: days},
			{Size: *c, Sink: "dir", Concurrency: 2, Days: days},
		}
		rep.Scenarios = append(rep.Scenarios, scs...)
		for i := range cfg.Runs {
			for _, sc := range scs {
				failed = errors.Join(failed, b.step(ctx, sc, i))
			}
		}
	}
	if cfg.Fleet != nil {
		rep.Fleet = b.runFleet(ctx, *cfg.Fleet)
		failed = errors.Join(failed, rep.Fleet.Err)
	}
	return rep, failed
}

func (b *bencher) logf(format string, a ...any) {
	fmt.Fprintf(b.cfg.Log, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// served is the simulator of the current size. Days are served chunked,
// as Kubecost serves them. (Setting Content-Length lets net/http use
// sendfile(2), which cut the simulator's CPU at 1M from 1.3 s to 0.3 s but
// did not change the exporter's wall time: the decoder is the bottleneck.)
type served struct {
	sim *kubecostsim.Sim
}

// serve starts the simulator on loopback. The Sim behind it is swapped per
// size; the listener stays.
func (b *bencher) serve() (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := b.cur.Load()
		if cur == nil {
			http.Error(w, "no simulator yet", http.StatusServiceUnavailable)
			return
		}
		cur.sim.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	b.url = "http://" + ln.Addr().String()
	b.logf("simulator listening on %s", b.url)
	return func() { srv.Close() }, nil
}

// plannedDays is what the exporter will find missing with backfill days,
// planned from the real clock as the exporter does.
func plannedDays(now time.Time, backfill int) []time.Time {
	first, last := exporter.Window(now, backfill, exporter.DefaultSettle)
	var out []time.Time
	for d := first; !d.After(last); d = d.Add(24 * time.Hour) {
		out = append(out, d)
	}
	return out
}

// prepare makes the size's simulator current and renders (or reuses) the
// days a run with backfill days will export.
func (b *bencher) prepare(ctx context.Context, size Size, backfill int) ([]Day, error) {
	simCfg := simConfig(b.cfg.Seed, size.ContainersPerHour, 30)
	fp, err := fingerprint(simCfg)
	if err != nil {
		return nil, err
	}
	sim := kubecostsim.New(simCfg)
	cur := &served{sim: sim}
	var days []Day
	for _, d := range plannedDays(time.Now(), backfill) {
		day, err := prepareDay(ctx, sim, b.cfg.CacheDir, fixtureName(d, size.ContainersPerHour, fp), d, b.logf)
		if err != nil {
			return nil, fmt.Errorf("size %s: %w", size.Name, err)
		}
		sim.AddPrerendered(day.Query, day.File)
		days = append(days, day)
	}
	b.cur.Store(cur)
	return days, nil
}

// prune drops cached days older than any this run can use and files of
// another simulator fingerprint for this run's sizes.
func (b *bencher) prune() {
	fps := map[int]string{}
	for _, s := range append(slices.Clone(b.cfg.Sizes), derefSizes(b.cfg.Concurrency)...) {
		if fp, err := fingerprint(simConfig(b.cfg.Seed, s.ContainersPerHour, 30)); err == nil {
			fps[s.ContainersPerHour] = fp
		}
	}
	pruneCache(b.cfg.CacheDir, plannedDays(time.Now(), backfillTwoDays)[0], fps, b.logf)
}

func derefSizes(s *Size) []Size {
	if s == nil {
		return nil
	}
	return []Size{*s}
}

func (b *bencher) sinks() []string {
	if b.minio != nil {
		return []string{"dir", "minio"}
	}
	return []string{"dir"}
}

// warm reads the days once, which puts them in the page cache: the state
// the server and the floor then find them in.
func warm(days []Day) {
	for _, d := range days {
		if f, err := os.Open(d.File); err == nil {
			io.Copy(io.Discard, f)
			f.Close()
		}
	}
}

// step is run i of a scenario; after a failure the scenario is skipped.
func (b *bencher) step(ctx context.Context, sc *Scenario, i int) error {
	if sc.Err != nil {
		return nil
	}
	r, err := b.runOnce(ctx, sc)
	if err != nil {
		sc.Err = fmt.Errorf("%s %s concurrency %d run %d: %w", sc.Size.Name, sc.Sink, sc.Concurrency, i+1, err)
		b.logf("FAILED: %v", sc.Err)
		return sc.Err
	}
	sc.Runs = append(sc.Runs, r)
	line := fmt.Sprintf("%s %s, %d day(s), CONCURRENCY=%d, run %d/%d: wall %s, peak RSS %.1f MiB, CPU %s (simulator %s), %d rows, %d file(s)",
		sc.Size.Name, sc.Sink, len(sc.Days), sc.Concurrency, i+1, b.cfg.Runs, r.M.Wall.Round(time.Millisecond),
		mib(r.M.MaxRSS), r.M.CPU().Round(time.Millisecond), r.ServerCPU.Round(time.Millisecond), r.Rows, r.Files)
	if r.M.TimeV != "" {
		line += "\n    /usr/bin/time -v: " + TimeVBrief(r.M.TimeV)
	}
	b.logf("%s", line)
	return nil
}

func (b *bencher) exporterEnv(sc *Scenario) []string {
	sim := b.cur.Load().sim
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + b.work,
		"TMPDIR=" + filepath.Join(b.work, "tmp"), // the exporter spools days here
		"CLUSTER_ID=" + clusterID,
		"KUBECOST_API_ENDPOINT=" + b.url,
		"BACKFILL_PERIOD_DAYS=" + strconv.Itoa(backfillFor(len(sc.Days))),
		"AGGREGATION=container",
		"GRANULARITY=hourly",
		"LABELS=" + strings.Join(sim.LabelKeys()[:3], ","),
		"ANNOTATIONS=" + strings.Join(sim.AnnotationKeys()[:2], ","),
		"CONCURRENCY=" + strconv.Itoa(sc.Concurrency),
		"LOG_FORMAT=json",
	}
}

func backfillFor(days int) int { return backfillOneDay + days - 1 }

// exec runs the exporter once with env (and -env last, so it overrides the
// bench's choices) into r's log, measuring it and the simulator's CPU.
func (b *bencher) exec(ctx context.Context, r *Run, name string, env []string) error {
	env = append(env, b.cfg.Env...)
	r.Log = filepath.Join(b.work, name+".log")
	cpu0 := processCPU()
	m, err := b.runner.Run(ctx, []string{b.cfg.Exporter}, env, r.Log)
	r.M, r.ServerCPU = m, processCPU()-cpu0
	if err != nil {
		return err
	}
	if m.ExitCode != 0 {
		return fmt.Errorf("exporter exited %d; log tail:\n%s", m.ExitCode, tailFile(r.Log, 2000))
	}
	return nil
}

// runOnce runs the exporter once into an empty destination and checks
// that it exported the pre-rendered days and nothing else.
func (b *bencher) runOnce(ctx context.Context, sc *Scenario) (Run, error) {
	var r Run
	want := plannedDays(time.Now(), backfillFor(len(sc.Days)))
	for i, d := range sc.Days {
		if i >= len(want) || !want[i].Equal(d.Day) {
			return r, errors.New("the UTC date changed during the benchmark: the exporter now plans other days; run it again")
		}
	}
	b.seq++
	name := fmt.Sprintf("%02d-%s-%s-c%d", b.seq, sc.Size.Name, sc.Sink, sc.Concurrency)
	env := b.exporterEnv(sc)
	out := filepath.Join(b.work, "out-"+name)
	switch sc.Sink {
	case "dir":
		env = append(env, "OUTPUT_DIR="+out)
		defer os.RemoveAll(out)
	case "minio":
		env = append(env, b.minio.Env(bucket)...)
		if err := b.minio.Empty(ctx, bucket); err != nil {
			return r, fmt.Errorf("empty bucket: %w", err)
		}
		defer b.minio.Empty(context.WithoutCancel(ctx), bucket)
	}
	sim := b.cur.Load().sim
	sim.ResetRequests()
	if err := b.exec(ctx, &r, name, env); err != nil {
		return r, err
	}
	if err := checkRequests(sim.Requests(), sc.Days); err != nil {
		return r, err
	}
	var err error
	switch sc.Sink {
	case "dir":
		err = r.countDir(out)
	case "minio":
		err = r.countBucket(ctx, b.minio)
	}
	if err != nil {
		return r, err
	}
	if r.Files != len(sc.Days) {
		return r, fmt.Errorf("want %d parquet files, found %d; log tail:\n%s", len(sc.Days), r.Files, tailFile(r.Log, 2000))
	}
	return r, nil
}

// checkRequests makes sure each day was served from its file exactly once:
// a query the bench did not predict would be generated live (measuring the
// simulator), and a repeated one is a retry inside the measurement.
func checkRequests(reqs []kubecostsim.Request, days []Day) error {
	served := map[string]int{}
	var others []string
	for _, r := range reqs {
		served[r.Query.Encode()]++
		if r.Query.Get("aggregate") != "cluster" {
			others = append(others, r.Query.Encode())
		}
	}
	for _, d := range days {
		if n := served[d.Query.Encode()]; n != 1 {
			return fmt.Errorf("day %s was requested %d times with the pre-rendered query %q; day queries seen: %q",
				d.Day.Format(time.DateOnly), n, d.Query.Encode(), others)
		}
	}
	if len(others) != len(days) {
		return fmt.Errorf("want %d day queries, got %d: %q", len(days), len(others), others)
	}
	return nil
}

func (r *Run) countDir(dir string) error {
	files, err := findFiles(dir, ".parquet")
	if err != nil {
		return err
	}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil {
			var pf *parquet.File
			if pf, err = parquet.OpenFile(f, fi.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true)); err == nil {
				r.Rows += pf.NumRows()
				r.OutBytes += fi.Size()
			}
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	r.Files = len(files)
	return nil
}

func (r *Run) countBucket(ctx context.Context, m *minio) error {
	objs, err := m.Objects(ctx, bucket)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if strings.HasSuffix(o.Key, ".parquet") {
			r.Files++
			r.Rows += o.Rows
			r.OutBytes += o.Size
		}
	}
	return nil
}
