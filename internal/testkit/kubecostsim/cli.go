package kubecostsim

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
	"strings"
	"time"
)

// Main is the kubecost-sim command: it serves a simulated Allocation API
// until ctx ends, or renders one response to a file. It returns the exit
// status (2 for bad flags).
//
//	kubecost-sim -seed 1 -containers-per-hour 42000       # prints "listening on http://127.0.0.1:PORT"
//	kubecost-sim -render 'window=2026-11-01T00:00:00Z,2026-11-02T00:00:00Z&aggregate=cluster,node,namespace,pod,container&step=1h' -out day.json
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	fl, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errFlagSyntax) {
			log.Error("bad flags", "err", err)
		}
		return 2
	}
	if fl.federated {
		now := fl.cfg.Now
		if now == nil {
			now = time.Now
		}
		// The fleet answers with the quirks, faults and empty sets asked
		// for, like the single-cluster server.
		fc := DemoFleet(now, fl.cfg.Flavor)
		fc.EmptySets, fc.Quirks, fc.Faults, fc.RealCore = fl.cfg.EmptySets, fl.cfg.Quirks, fl.cfg.Faults, fl.realCore
		fleet := NewFleet(fc)
		return listenAndServe(ctx, fleet, fl, stdout, log, func() {
			// The exporter's CLUSTER_ARNS for this primary, for `make demo`.
			fmt.Fprintf(stdout, "CLUSTER_ARNS=%s\n", fleet.ClusterARNs())
			log.Info("federated kubecost simulator", "clusters", len(fleet.Members()), "now", now().UTC().Format(time.RFC3339))
		})
	}
	sim := New(fl.cfg)
	if fl.curExport != "" {
		if code := writeCURExport(ctx, sim, fl, stdout, log); code != 0 {
			return code
		}
	}
	if fl.gen3 {
		return serveGen3(ctx, sim, fl, stdout, log)
	}
	if fl.render != "" {
		return renderOne(sim, fl.render, fl.out, stdout, log)
	}
	if fl.serveFile != "" {
		q, err := url.ParseQuery(fl.serveQuery)
		if err != nil {
			log.Error("bad -serve-query", "err", err)
			return 2
		}
		sim.AddPrerendered(q, fl.serveFile)
	}
	return serve(ctx, sim, fl, stdout, log)
}

// errFlagSyntax marks errors the flag package has already printed.
var errFlagSyntax = errors.New("flag syntax")

// cliFlags is the parsed command line.
type cliFlags struct {
	cfg                      Config
	listen, render, out      string
	serveFile, serveQuery    string
	certFile, keyFile, caOut string
	quirks, mode, now        string
	flavor                   string
	failNext                 int
	plainErrors              bool
	federated                bool
	realCore                 bool
	gen3                     bool
	gen3cfg                  Gen3Config
	curExport, clusterARN    string
}

func parseFlags(args []string, stderr io.Writer) (*cliFlags, error) {
	fs := flag.NewFlagSet("kubecost-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var fl cliFlags
	cfg, f := &fl.cfg, &fl.cfg.Faults
	fs.StringVar(&fl.listen, "listen", "127.0.0.1:0", "listen address")
	fs.BoolVar(&fl.federated, "federated", false, "serve a federated primary of four clusters in two accounts and regions (prints CLUSTER_ARNS=...); -cluster and the size flags are ignored")
	fs.BoolVar(&fl.realCore, "real-core", false, "with -federated: treat idle as the real core does (other clusters' idle rows in filtered responses, idle merged across clusters without splitIdle, NaN usage as null)")
	fs.BoolVar(&fl.gen3, "gen3", false, "serve Kubecost 3.x: the printed URL is the frontend, proxying /model/ to an aggregator on another port (printed as AGGREGATOR=...)")
	fs.DurationVar(&fl.gen3cfg.Timeout, "frontend-timeout", 300*time.Second, "with -gen3: the frontend's proxy_read_timeout (frontend.timeoutSeconds); slower answers are cut with 504")
	fs.StringVar(&fl.gen3cfg.RequireHeader, "require-header", "", "with -gen3: 'Name: value' the aggregator's API requires (SSO on): 401 without, 403 with another value")
	fs.DurationVar(&fl.gen3cfg.ComputePerHour, "compute-per-hour", 0, "with -gen3: how long the aggregator computes per hour of a pod- or container-level window")
	fs.Int64Var(&cfg.Seed, "seed", 0, "cluster generator seed")
	fs.StringVar(&cfg.ClusterName, "cluster", "cluster-one", "Kubecost cluster id")
	fs.StringVar(&fl.flavor, "flavor", "kubecost", "server to simulate: kubecost (/model/allocation, /allocation) or opencost (/allocation/compute, /allocation)")
	fs.StringVar(&cfg.Region, "region", "us-east-1", "AWS region of the nodes")
	fs.IntVar(&cfg.RetentionDays, "retention-days", 30, "days of data kept before today")
	fs.IntVar(&cfg.HourlyRetentionHours, "hourly-retention-hours", 0, "hours of sub-day data kept (0: as -retention-days)")
	fs.StringVar(&fl.now, "now", "", "fixed current time, RFC3339 (default: the real clock)")
	fs.IntVar(&cfg.ContainersPerHour, "containers-per-hour", 0, "size the cluster for about this many containers per hour (overrides -namespaces, -pods-per-namespace)")
	fs.IntVar(&cfg.Namespaces, "namespaces", 0, "user namespaces (default 6)")
	fs.IntVar(&cfg.PodsPerNamespace, "pods-per-namespace", 0, "pod slots per namespace (default 10)")
	fs.IntVar(&cfg.ContainersPerPod, "containers-per-pod", 0, "mean containers per pod (default 2)")
	fs.IntVar(&cfg.Nodes, "nodes", 0, "nodes (default: one per 12 pods)")
	fs.BoolVar(&cfg.EmptySets, "empty-sets", false, "render unavailable sets as {} instead of null")
	fs.StringVar(&fl.quirks, "quirks", "", "comma list of: null, negzero, offset, nan, extra, no-provider-id")
	fs.StringVar(&fl.mode, "fault", "none", "fault mode: none, status, html, truncate, invalid-json, null-data")
	fs.IntVar(&f.Times, "fault-times", 0, "apply -fault to this many requests only (0: all)")
	fs.IntVar(&fl.failNext, "fail-next", 0, "shorthand for -fault status -fault-times N")
	fs.IntVar(&f.Status, "fail-status", 500, "HTTP status for -fault status")
	fs.BoolVar(&fl.plainErrors, "plain-errors", false, `error bodies as {"error":...} instead of {"code":...,"message":...}`)
	fs.DurationVar(&f.RetryAfter, "retry-after", 0, "Retry-After on 503 responses")
	fs.IntVar(&f.TruncateAfter, "truncate-after", 1000, "body bytes sent before -fault truncate drops the connection")
	fs.DurationVar(&f.Delay, "delay", 0, "delay before every allocation response")
	fs.IntVar(&f.MaxWindowHours, "max-window-hours", 0, "fail windows longer than this many hours with 500 (0: off)")
	fs.StringVar(&fl.certFile, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	fs.StringVar(&fl.keyFile, "tls-key", "", "private key for -tls-cert")
	fs.StringVar(&fl.caOut, "tls-ca-out", "", "serve HTTPS with a fresh private CA and write the CA certificate (PEM) here")
	fs.StringVar(&fl.render, "render", "", "write the response to this query (e.g. 'window=...&aggregate=...&step=1h') and exit")
	fs.StringVar(&fl.out, "out", "-", "file for -render ('-': stdout)")
	fs.StringVar(&fl.serveFile, "serve-file", "", "serve this pre-rendered body for -serve-query")
	fs.StringVar(&fl.serveQuery, "serve-query", "", "query answered with -serve-file")
	fs.StringVar(&fl.curExport, "cur-export", "", "first write the bill of the simulated days into this directory: a CUR 2.0 Data Export with split cost allocation data (<dir>/kubecost-sim-cur/data/BILLING_PERIOD=YYYY-MM/), with instance and volume lines of a known purchase mix (prints CUR_EXPORT=<dir> and the mix)")
	fs.StringVar(&fl.clusterARN, "cluster-arn", "", "with -cur-export: the cluster's EKS ARN in the bill's pod lines (default arn:aws:eks:<region>:111122223333:cluster/<cluster>); give the exporter's CLUSTER_ID")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errFlagSyntax
	}
	return &fl, fl.resolve()
}

// resolve turns the string flags into Config fields.
func (fl *cliFlags) resolve() error {
	switch fl.cfg.Flavor = Flavor(fl.flavor); fl.cfg.Flavor {
	case FlavorKubecost, FlavorOpenCost:
	default:
		return fmt.Errorf("-flavor %q: want kubecost or opencost", fl.flavor)
	}
	if fl.now != "" {
		t, err := time.Parse(time.RFC3339, fl.now)
		if err != nil {
			return fmt.Errorf("-now: %w", err)
		}
		fl.cfg.Now = func() time.Time { return t }
	}
	q := &fl.cfg.Quirks
	for _, name := range strings.FieldsFunc(fl.quirks, func(r rune) bool { return r == ',' }) {
		switch strings.TrimSpace(name) {
		case "null":
			q.NullNumbers = true
		case "negzero":
			q.NegativeZero = true
		case "offset":
			q.OffsetTimes = true
		case "nan":
			q.NaNStrings = true
		case "extra":
			q.ExtraFields = true
		case "no-provider-id":
			q.NoProviderID = true
		default:
			return fmt.Errorf("-quirks: unknown quirk %q", name)
		}
	}
	f := &fl.cfg.Faults
	var err error
	if f.Mode, err = ParseFaultMode(fl.mode); err != nil {
		return fmt.Errorf("-fault: %w", err)
	}
	if fl.failNext > 0 {
		f.Mode, f.Times = FaultStatus, fl.failNext
	}
	if fl.plainErrors {
		f.ErrorStyle = ErrorPlain
	}
	if fl.gen3 && (fl.federated || fl.cfg.Flavor != FlavorKubecost || fl.render != "" || fl.serveFile != "") {
		return errors.New("-gen3 serves one Kubecost 3.x cluster: not with -federated, -flavor opencost, -render or -serve-file")
	}
	if fl.curExport != "" && fl.federated {
		return errors.New("-cur-export writes the bill of one cluster: not with -federated")
	}
	if fl.federated && (fl.render != "" || fl.serveFile != "") {
		return errors.New("-federated serves the demo fleet: -render and -serve-file are single-cluster only")
	}
	return nil
}

// tlsConfig returns the server's TLS config, or nil for plain HTTP.
func (fl *cliFlags) tlsConfig() (*tls.Config, error) {
	switch {
	case fl.caOut != "":
		caPEM, cert, err := GenerateCert("127.0.0.1", "localhost", "::1")
		if err != nil {
			return nil, fmt.Errorf("generate certificate: %w", err)
		}
		if err := os.WriteFile(fl.caOut, caPEM, 0o644); err != nil {
			return nil, fmt.Errorf("write -tls-ca-out: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}}, nil
	case fl.certFile != "" || fl.keyFile != "":
		cert, err := tls.LoadX509KeyPair(fl.certFile, fl.keyFile)
		if err != nil {
			return nil, fmt.Errorf("load -tls-cert/-tls-key: %w", err)
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}}, nil
	}
	return nil, nil
}

func serve(ctx context.Context, sim *Sim, fl *cliFlags, stdout io.Writer, log *slog.Logger) int {
	return listenAndServe(ctx, sim, fl, stdout, log, func() {
		c := sim.Config()
		log.Info("kubecost simulator", "cluster", c.ClusterName, "seed", c.Seed, "namespaces", c.Namespaces,
			"podsPerNamespace", c.PodsPerNamespace, "nodes", c.Nodes, "retentionDays", c.RetentionDays,
			"now", c.Now().UTC().Format(time.RFC3339), "fault", c.Faults.Mode)
	})
}

// listenAndServe serves h until ctx ends; started runs once the address
// line is printed.
func listenAndServe(ctx context.Context, h http.Handler, fl *cliFlags, stdout io.Writer, log *slog.Logger, started func()) int {
	tlsCfg, err := fl.tlsConfig()
	if err != nil {
		log.Error("tls", "err", err)
		return 2
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsCfg}
	ln, err := net.Listen("tcp", fl.listen)
	if err != nil {
		log.Error("listen", "err", err)
		return 2
	}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	fmt.Fprintf(stdout, "listening on %s://%s\n", scheme, ln.Addr())
	started()

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

// writeCURExport writes the simulated bill (cur.go) before serving.
func writeCURExport(ctx context.Context, sim *Sim, fl *cliFlags, stdout io.Writer, log *slog.Logger) int {
	start := time.Now()
	keys, err := sim.WriteCURExport(ctx, fl.curExport, CUROptions{ClusterARN: fl.clusterARN})
	if err != nil {
		log.Error("write the CUR export", "err", err)
		return 1
	}
	fmt.Fprintf(stdout, "CUR_EXPORT=%s\n", fl.curExport)
	// The bill's known mix (cur.go), for the demo to print next to the
	// waterfall: one line per node and per volume.
	for _, m := range sim.CURMix() {
		fmt.Fprintf(stdout, "CUR_NODE node=%s instance=%s type=%s purchase=%s on_demand_hourly=%.6f amortized_hourly=%.6f\n",
			m.Node, m.InstanceID, m.InstanceType, m.Purchase, m.HourlyOnDemand, m.HourlyAmortized)
	}
	for _, v := range sim.CURVolumes() {
		fmt.Fprintf(stdout, "CUR_VOLUME volume=%s pv=%s namespace=%s gib=%g hourly=%.6f\n", v.VolumeID, v.PV, v.Namespace, v.GiB, v.HourlyCost)
	}
	log.Info("wrote the CUR 2.0 export", "dir", fl.curExport, "files", len(keys), "elapsed", time.Since(start).Round(time.Millisecond))
	return 0
}

func renderOne(sim *Sim, query, path string, stdout io.Writer, log *slog.Logger) int {
	q, err := url.ParseQuery(query)
	if err != nil {
		log.Error("bad -render query", "err", err)
		return 2
	}
	w := stdout
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
	var pe *ParamError
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
