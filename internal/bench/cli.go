// Package bench is `make bench`: it measures the kubecost-s3-exporter
// binary end to end against pre-rendered simulator days and compares it
// with the tokenize floor. See .ci/bench.sh and docs/performance.md.
//
//	kse-bench -exporter bin/kubecost-s3-exporter -minio "$MINIO_BIN" -doc docs/performance.md
package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// envList collects repeated -env KEY=VALUE flags.
type envList []string

func (e *envList) String() string { return strings.Join(*e, ",") }
func (e *envList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	*e = append(*e, v)
	return nil
}

// Main runs the benchmark driver with args (without the program name) and
// returns the exit status. cmd/kse-bench only calls it.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "cur-month" { // the report's bench input (curmonth.go)
		return curMonthMain(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "cur-s3" { // what the report GETs from S3 (curs3.go)
		return curS3Main(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("kse-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	var env envList
	fs.StringVar(&cfg.Exporter, "exporter", "bin/kubecost-s3-exporter", "exporter binary to measure")
	fs.StringVar(&cfg.MinIO, "minio", "", "minio binary; empty skips the MinIO sink")
	fs.StringVar(&cfg.CacheDir, "cache", ".cache/bench", "directory for rendered days (reused)")
	fs.StringVar(&cfg.WorkDir, "work", "", "directory for outputs and exporter logs (default: a temp dir, removed)")
	sizes := fs.String("sizes", "24k,120k,1M", "allocations per hourly day, comma-separated")
	fs.IntVar(&cfg.Runs, "runs", 3, "runs per size and sink")
	fs.Int64Var(&cfg.Seed, "seed", 1, "simulator seed")
	conc := fs.String("concurrency-size", "120k", "size of the two-day CONCURRENCY=1/2 scenario; empty skips it")
	fleet := fs.String("fleet", "4x1.2M", "federated scenario, <clusters>x<allocations per fleet day>; empty skips it")
	timeMode := fs.String("time", "auto", "auto: also wrap runs in /usr/bin/time -v when installed; off: never")
	doc := fs.String("doc", "", "markdown file to update with the results (only after a full, successful run)")
	fs.StringVar(&cfg.Rev, "rev", "", "source revision to name in the report, e.g. git describe output")
	strict := fs.Bool("strict", false, "exit 1 when a target is missed")
	fs.Var(&env, "env", "extra KEY=VALUE for the exporter (repeatable); GOGC, GOMEMLIMIT, GOMAXPROCS, GODEBUG pass through")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kse-bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var err error
	if cfg.Sizes, err = ParseSizes(*sizes); err != nil {
		fmt.Fprintln(stderr, "kse-bench: -sizes:", err)
		return 2
	}
	if *conc != "" {
		cs, err := ParseSizes(*conc)
		if err != nil || len(cs) != 1 {
			fmt.Fprintln(stderr, "kse-bench: -concurrency-size: want one size like 120k")
			return 2
		}
		cfg.Concurrency = &cs[0]
	}
	if *fleet != "" {
		f, err := ParseFleet(*fleet)
		if err != nil {
			fmt.Fprintln(stderr, "kse-bench: -fleet:", err)
			return 2
		}
		cfg.Fleet = &f
	}
	switch *timeMode {
	case "auto":
		cfg.TimeBin = DefaultTimeBin()
	case "off":
	default:
		fmt.Fprintln(stderr, "kse-bench: -time: want auto or off")
		return 2
	}
	if _, err := os.Stat(cfg.Exporter); err != nil {
		fmt.Fprintf(stderr, "kse-bench: -exporter: %v (build it with go build -o bin/ ./cmd/...)\n", err)
		return 2
	}
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GODEBUG"} {
		if v, ok := os.LookupEnv(k); ok {
			cfg.Env = append(cfg.Env, k+"="+v)
		}
	}
	cfg.Env = append(cfg.Env, env...)
	cfg.Log = stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, runErr := runBench(ctx, cfg)
	md := rep.Markdown()
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, md)
	status := 0
	if runErr != nil {
		fmt.Fprintf(stderr, "kse-bench: %v\n", runErr)
		status = 1
	}
	full := cfg.MinIO != "" && hasSizes(cfg.Sizes, 24_000, 120_000, 1_000_000)
	switch {
	case *doc == "":
	case runErr != nil:
		fmt.Fprintf(stderr, "kse-bench: %s not updated: a run failed\n", *doc)
	case !full:
		fmt.Fprintf(stderr, "kse-bench: %s not updated: partial run (it needs 24k, 120k, 1M and MinIO)\n", *doc)
	default:
		if err := WriteDoc(*doc, md); err != nil {
			fmt.Fprintln(stderr, "kse-bench:", err)
			status = 1
		} else {
			fmt.Fprintf(stderr, "kse-bench: results written to %s\n", *doc)
		}
	}
	if rep.Missed() {
		if *strict {
			fmt.Fprintln(stderr, "kse-bench: a target was missed (strict mode)")
			status = 1
		} else {
			fmt.Fprintln(stderr, "kse-bench: a target was missed (set BENCH_STRICT=1 to fail on it)")
		}
	}
	return status
}

func hasSizes(sizes []Size, targets ...int) bool {
	for _, t := range targets {
		if !slices.ContainsFunc(sizes, func(s Size) bool { return s.Target == t }) {
			return false
		}
	}
	return true
}
