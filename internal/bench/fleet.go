package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// FleetSpec is the federated scenario: one exporter exports a fleet day of
// Clusters clusters whose hourly allocations add up to about Size, each
// cluster-day fetched with its own filtered query. The primary renders
// live (a fleet is not pre-rendered), so the figure that counts is the
// exporter's peak RSS, not its wall time.
type FleetSpec struct {
	Clusters int
	Size     Size
}

// ParseFleet parses "<clusters>x<size>", e.g. "4x1.2M".
func ParseFleet(s string) (FleetSpec, error) {
	n, size, ok := strings.Cut(s, "x")
	c, err := strconv.Atoi(n)
	if !ok || err != nil || c < 2 || c > 50 {
		return FleetSpec{}, fmt.Errorf("bad fleet %q: want <clusters>x<allocations per fleet day>, e.g. 4x1.2M", s)
	}
	sizes, err := ParseSizes(size)
	if err != nil || len(sizes) != 1 {
		return FleetSpec{}, fmt.Errorf("bad fleet %q: %v", s, err)
	}
	return FleetSpec{Clusters: c, Size: sizes[0]}, nil
}

// FleetResult is what the fleet scenario measured.
type FleetResult struct {
	Spec FleetSpec
	Runs []Run
	Err  error
}

// PeakRSS is the largest peak RSS of the runs.
func (f *FleetResult) PeakRSS() int64 {
	var m int64
	for _, r := range f.Runs {
		m = max(m, r.M.MaxRSS)
	}
	return m
}

func (f *FleetResult) ok() bool { return f != nil && f.Err == nil && len(f.Runs) > 0 }

// fleetConfig spreads the spec's size over its clusters, in two accounts
// and two regions.
func fleetConfig(seed int64, spec FleetSpec) kubecostsim.FleetConfig {
	cfg := kubecostsim.FleetConfig{Flavor: kubecostsim.FlavorKubecost}
	for i := range spec.Clusters {
		c := simConfig(seed+int64(i), max(1, spec.Size.ContainersPerHour/spec.Clusters), 30)
		c.ClusterName = fmt.Sprintf("fleet-%02d", i)
		c.Region = []string{"us-east-1", "eu-west-1"}[i%2]
		cfg.Members = append(cfg.Members, kubecostsim.Member{Config: c,
			Account: []string{"111122223333", "444455556666"}[(i/2)%2], EKSName: fmt.Sprintf("eks-%02d", i)})
	}
	return cfg
}

// runFleet measures the fleet scenario Runs times into a directory.
func (b *bencher) runFleet(ctx context.Context, spec FleetSpec) *FleetResult {
	res := &FleetResult{Spec: spec}
	fleet := kubecostsim.NewFleet(fleetConfig(b.cfg.Seed, spec))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		res.Err = err
		return res
	}
	srv := &http.Server{Handler: fleet, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	for i := range b.cfg.Runs {
		r, err := b.fleetOnce(ctx, fleet, "http://"+ln.Addr().String(), i)
		if err != nil {
			res.Err = fmt.Errorf("fleet %dx%s run %d: %w", spec.Clusters, spec.Size.Name, i+1, err)
			b.logf("%v", res.Err)
			return res
		}
		res.Runs = append(res.Runs, r)
		b.logf("fleet %dx%s run %d/%d: wall %s, peak RSS %.1f MiB, %d rows in %d files", spec.Clusters, spec.Size.Name,
			i+1, b.cfg.Runs, r.M.Wall.Round(time.Millisecond), mib(r.M.MaxRSS), r.Rows, r.Files)
	}
	return res
}

func (b *bencher) fleetOnce(ctx context.Context, fleet *kubecostsim.Fleet, url string, i int) (Run, error) {
	var r Run
	name := fmt.Sprintf("fleet-%d", i)
	out := filepath.Join(b.work, "out-"+name)
	defer os.RemoveAll(out)
	members := fleet.Members()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + b.work, "TMPDIR=" + filepath.Join(b.work, "tmp"),
		"CLUSTER_ARNS=" + fleet.ClusterARNs(), "KUBECOST_API_ENDPOINT=" + url, "OUTPUT_DIR=" + out,
		"BACKFILL_PERIOD_DAYS=" + strconv.Itoa(backfillOneDay), "AGGREGATION=container", "GRANULARITY=hourly",
		"CONCURRENCY=1", "LOG_FORMAT=json",
	}
	fleet.ResetRequests()
	if err := b.exec(ctx, &r, name, env); err != nil {
		return r, err
	}
	// One filtered query per cluster-day, each built from one cluster.
	for _, q := range fleet.Requests() {
		if q.Query.Get("aggregate") != "cluster" && len(q.Clusters) != 1 {
			return r, fmt.Errorf("a cluster-day query was answered with clusters %v", q.Clusters)
		}
	}
	if err := r.countDir(out); err != nil {
		return r, err
	}
	if r.Files != len(members) {
		return r, fmt.Errorf("want %d parquet files (one per cluster), found %d", len(members), r.Files)
	}
	return r, nil
}

// fleetCheck holds the fleet to the single-cluster memory targets: peak
// RSS within TargetRSS and within TargetRSSGrowth of the 24k day's.
func (r *Report) fleetChecks() []Check {
	f := r.Fleet
	if f == nil {
		return nil
	}
	name := fmt.Sprintf("federated fleet day, %d clusters, %s allocations", f.Spec.Clusters, f.Spec.Size.Name)
	c := Check{Target: fmt.Sprintf("%s: peak RSS ≤ %d MiB", name, TargetRSS>>20), Sink: "dir", Measured: true}
	g := Check{Target: fmt.Sprintf("%s: peak RSS ≤ %.1f× peak RSS at 24k", name, TargetRSSGrowth), Sink: "dir"}
	if !f.ok() {
		c.Detail = "run failed"
		return []Check{c}
	}
	c.Pass = f.PeakRSS() <= TargetRSS
	c.Detail = fmt.Sprintf("%.1f MiB, %d rows", mib(f.PeakRSS()), f.Runs[len(f.Runs)-1].Rows)
	if a := r.scenario(small, "dir", 1); a != nil && a.ok() {
		g.Measured = true
		ratio := float64(f.PeakRSS()) / float64(a.PeakRSS())
		g.Pass = ratio <= TargetRSSGrowth
		g.Detail = fmt.Sprintf("%.2f× (%.1f / %.1f MiB)", ratio, mib(f.PeakRSS()), mib(a.PeakRSS()))
	} else {
		g.Detail = "needs the 24k size"
	}
	return []Check{c, g}
}

// fleetMarkdown is the fleet's table.
func (r *Report) fleetMarkdown() string {
	f := r.Fleet
	if f == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nFederated Kubecost: one exporter, one filtered query per cluster-day, the primary rendering live in this process:\n\n")
	fmt.Fprintf(&b, "| clusters | fleet day (target) | rows written | files | wall s | peak RSS MiB | CPU s |\n|--:|--:|--:|--:|--:|--:|--:|\n")
	if !f.ok() {
		fmt.Fprintf(&b, "| %d | %s | failed | | | | |\n", f.Spec.Clusters, f.Spec.Size.Name)
		return b.String()
	}
	for _, run := range f.Runs {
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %.2f | %.1f | %.2f |\n", f.Spec.Clusters, f.Spec.Size.Name, run.Rows, run.Files,
			run.M.Wall.Seconds(), mib(run.M.MaxRSS), run.M.CPU().Seconds())
	}
	return b.String()
}
