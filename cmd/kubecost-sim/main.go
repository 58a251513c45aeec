// Command kubecost-sim serves a simulated Kubecost Allocation API, or renders
// one response to a file, for demos and benchmarks of the exporter.
//
//	kubecost-sim -seed 1 -containers-per-hour 42000       # prints "listening on http://127.0.0.1:PORT"
//	kubecost-sim -render 'window=2026-11-01T00:00:00Z,2026-11-02T00:00:00Z&aggregate=cluster,node,namespace,pod,container&step=1h' -out day.json
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubecost-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg kubecostsim.Config
	var f kubecostsim.Faults
	listen := fs.String("listen", "127.0.0.1:0", "listen address")
	fs.Int64Var(&cfg.Seed, "seed", 0, "cluster generator seed")
	fs.StringVar(&cfg.ClusterName, "cluster", "cluster-one", "Kubecost cluster id")
	flavor := fs.String("flavor", "kubecost", "server to simulate: kubecost (/model/allocation, /allocation) or opencost (/allocation/compute, /allocation)")
	fs.StringVar(&cfg.Region, "region", "us-east-1", "AWS region of the nodes")
	fs.IntVar(&cfg.RetentionDays, "retention-days", 30, "days of data kept before today")
	fs.IntVar(&cfg.HourlyRetentionHours, "hourly-retention-hours", 0, "hours of sub-day data kept (0: as -retention-days)")
	now := fs.String("now", "", "fixed current time, RFC3339 (default: the real clock)")
	fs.IntVar(&cfg.ContainersPerHour, "containers-per-hour", 0, "size the cluster for about this many containers per hour (overrides -namespaces, -pods-per-namespace)")
	fs.IntVar(&cfg.Namespaces, "namespaces", 0, "user namespaces (default 6)")
	fs.IntVar(&cfg.PodsPerNamespace, "pods-per-namespace", 0, "pod slots per namespace (default 10)")
	fs.IntVar(&cfg.ContainersPerPod, "containers-per-pod", 0, "mean containers per pod (default 2)")
	fs.IntVar(&cfg.Nodes, "nodes", 0, "nodes (default: one per 12 pods)")
	fs.BoolVar(&cfg.EmptySets, "empty-sets", false, "render unavailable sets as {} instead of null")
	quirks := fs.String("quirks", "", "comma list of: null, negzero, offset, nan, extra")
	mode := fs.String("fault", "none", "fault mode: none, status, html, truncate, invalid-json, null-data")
	fs.IntVar(&f.Times, "fault-times", 0, "apply -fault to this many requests only (0: all)")
	failNext := fs.Int("fail-next", 0, "shorthand for -fault status -fault-times N")
	fs.IntVar(&f.Status, "fail-status", 500, "HTTP status for -fault status")
	plain := fs.Bool("plain-errors", false, `error bodies as {"error":...} instead of {"code":...,"message":...}`)
	fs.DurationVar(&f.RetryAfter, "retry-after", 0, "Retry-After on 503 responses")
	fs.IntVar(&f.TruncateAfter, "truncate-after", 1000, "body bytes sent before -fault truncate drops the connection")
	fs.DurationVar(&f.Delay, "delay", 0, "delay before every allocation response")
	fs.IntVar(&f.MaxWindowHours, "max-window-hours", 0, "fail windows longer than this many hours with 500 (0: off)")
	certFile := fs.String("tls-cert", "", "serve HTTPS with this certificate (PEM)")
	keyFile := fs.String("tls-key", "", "private key for -tls-cert")
	caOut := fs.String("tls-ca-out", "", "serve HTTPS with a fresh private CA and write the CA certificate (PEM) here")
	render := fs.String("render", "", "write the response to this query (e.g. 'window=...&aggregate=...&step=1h') and exit")
	out := fs.String("out", "-", "file for -render ('-': stdout)")
	serveFile := fs.String("serve-file", "", "serve this pre-rendered body for -serve-query")
	serveQuery := fs.String("serve-query", "", "query answered with -serve-file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	switch cfg.Flavor = kubecostsim.Flavor(*flavor); cfg.Flavor {
	case kubecostsim.FlavorKubecost, kubecostsim.FlavorOpenCost:
	default:
		log.Error("bad -flavor", "flavor", *flavor)
		return 2
	}
	fail := func(msg string, err error) int {
		log.Error(msg, "err", err)
		return 2
	}

	if *now != "" {
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			return fail("bad -now", err)
		}
		cfg.Now = func() time.Time { return t }
	}
	for _, q := range strings.FieldsFunc(*quirks, func(r rune) bool { return r == ',' }) {
		switch strings.TrimSpace(q) {
		case "null":
			cfg.Quirks.NullNumbers = true
		case "negzero":
			cfg.Quirks.NegativeZero = true
		case "offset":
			cfg.Quirks.OffsetTimes = true
		case "nan":
			cfg.Quirks.NaNStrings = true
		case "extra":
			cfg.Quirks.ExtraFields = true
		default:
			return fail("bad -quirks", fmt.Errorf("unknown quirk %q", q))
		}
	}
	var err error
	if f.Mode, err = kubecostsim.ParseFaultMode(*mode); err != nil {
		return fail("bad -fault", err)
	}
	if *failNext > 0 {
		f.Mode, f.Times = kubecostsim.FaultStatus, *failNext
	}
	if *plain {
		f.ErrorStyle = kubecostsim.ErrorPlain
	}
	cfg.Faults = f
	sim := kubecostsim.New(cfg)

	if *render != "" {
		return renderOne(sim, *render, *out, log)
	}
	if *serveFile != "" {
		q, err := url.ParseQuery(*serveQuery)
		if err != nil {
			return fail("bad -serve-query", err)
		}
		sim.AddPrerendered(q, *serveFile)
	}

	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	switch {
	case *caOut != "":
		caPEM, cert, err := kubecostsim.GenerateCert("127.0.0.1", "localhost", "::1")
		if err != nil {
			return fail("generate certificate", err)
		}
		if err := os.WriteFile(*caOut, caPEM, 0o644); err != nil {
			return fail("write -tls-ca-out", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		scheme = "https"
	case *certFile != "" || *keyFile != "":
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return fail("load -tls-cert/-tls-key", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail("listen", err)
	}
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	fmt.Fprintf(stdout, "listening on %s://%s\n", scheme, ln.Addr())
	c := sim.Config()
	log.Info("kubecost simulator", "cluster", c.ClusterName, "seed", c.Seed, "namespaces", c.Namespaces,
		"podsPerNamespace", c.PodsPerNamespace, "nodes", c.Nodes, "retentionDays", c.RetentionDays,
		"now", c.Now().UTC().Format(time.RFC3339), "fault", f.Mode)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		log.Error("serve", "err", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Error("shutdown", "err", err)
	}
	return 0
}

func renderOne(sim *kubecostsim.Sim, query, path string, log *slog.Logger) int {
	q, err := url.ParseQuery(query)
	if err != nil {
		log.Error("bad -render query", "err", err)
		return 2
	}
	var w io.Writer = os.Stdout
	var file *os.File
	if path != "-" {
		if file, err = os.Create(path); err != nil {
			log.Error("create -out", "err", err)
			return 1
		}
		w = file
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	start := time.Now()
	if err = sim.WriteResponse(bw, q); err == nil {
		err = bw.Flush()
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path) // a partial body would pass for a response
		}
	}
	var pe *kubecostsim.ParamError
	switch {
	case errors.As(err, &pe):
		log.Error("bad -render query", "err", err)
		return 2
	case err != nil:
		log.Error("render", "err", err)
		return 1
	}
	log.Info("rendered", "out", path, "elapsed", time.Since(start).Round(time.Millisecond))
	return 0
}
