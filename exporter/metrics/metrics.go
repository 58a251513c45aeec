// Package metrics pushes the outcome of one run as Prometheus metrics to a Pushgateway, once
// at its end, as a CronJob's pod is gone before Prometheus could scrape it. Each push builds
// a fresh registry, never client_golang's global one.
package metrics

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Namespace prefixes every metric name.
const Namespace = "kubecost_s3_exporter"

// Cluster is what one run did for one cluster, as the command fills it from the run's summary.
type Cluster struct {
	Plan    exporter.Plan // the window, Kubecost's days, the stored days, the days to export
	Written int           // days this run wrote
	Failed  int           // days that could not be exported
	Rows    int64
	Bytes   int64
	Done    []time.Time // the days stored during the run (by it, or first by another run)
	// Planned (app.Planned): without a plan, Plan holds only the window, and an
	// archive_missing_days pushed from it would read as "no hole" and reset the hole alert;
	// none is pushed, so the last known count stays in the Pushgateway.
	Planned   bool
	Remaining int // days left for the next run by the budget (app.ClusterResult.Remaining)
}

// Run is what one run reports for one cluster: one group per cluster, so dashboards and
// alerts stay per cluster.
type Run struct {
	Start, End time.Time
	Cluster    Cluster
	Err        error // nil when the run succeeded for this cluster
	// Requests counts the whole run's Kubecost requests by outcome, every outcome listed
	// (kubecost.Counter.Counts): one series each.
	Requests        map[string]int64
	DaysWithoutIdle *int64 // days Kubecost returned without an idle row; nil: no client counted
	RunID           string // the scheduled run (RunID), so the alerts count runs, not pods
	Progressed      bool   // app.Summary.Progressed
}

// MissingDays counts the window's days not in the archive after the run, from the cluster's
// first known day (stored or offered by Kubecost) on, so that a new cluster does not look
// like a hole; ok is false when the run never got as far as a plan. Before the window (a
// backlog, exporter.BacklogFrom) only days Kubecost still offers count: a day it no longer
// holds cannot be exported, and an old archive's gaps are not this run's holes.
func MissingDays(p exporter.Plan, done []time.Time) (n int, ok bool) {
	if p.First.IsZero() || p.Last.Before(p.First) {
		return 0, false
	}
	stored := map[time.Time]bool{}
	for _, d := range p.Present {
		stored[d] = true
	}
	for _, d := range done {
		stored[exporter.Midnight(d)] = true
	}
	for _, d := range p.Available {
		if d.Before(p.First) && !stored[d] {
			n++
		}
	}
	known := slices.DeleteFunc(slices.Concat(p.Present, p.Available), func(d time.Time) bool { return d.Before(p.First) })
	if len(known) == 0 {
		return n, true
	}
	first := slices.MinFunc(known, time.Time.Compare)
	for d := first; !d.After(p.Last); d = d.AddDate(0, 0, 1) {
		if !stored[d] {
			n++
		}
	}
	return n, true
}

// Registry returns a fresh registry holding r's metrics.
func Registry(r Run) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	gauge := func(name, help string, v float64) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
		g.Set(v)
		reg.MustRegister(g)
	}
	vec := func(name, help, label string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, []string{label})
		reg.MustRegister(v)
		return v
	}
	unix := func(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
	sum := r.Cluster
	success := 0.0
	if r.Err == nil {
		success = 1
		// Pushes add to the group, so a failed run leaves this in place for the staleness alert.
		gauge("last_success_timestamp_seconds", "Unix time at which the last successful run ended.", unix(r.End))
	}
	gauge("last_run_start_timestamp_seconds", "Unix time at which the last run started.", unix(r.Start))
	gauge("last_run_end_timestamp_seconds", "Unix time at which the last run ended.", unix(r.End))
	gauge("last_run_success", "1 when the last run succeeded (exit status 0), else 0.", success)
	gauge("last_run_duration_seconds", "Duration of the last run.", r.End.Sub(r.Start).Seconds())
	gauge("last_run_days_planned", "Days the last run planned to export.", float64(len(sum.Plan.Exports())))
	gauge("last_run_days_written", "Days the last run wrote.", float64(sum.Written))
	gauge("last_run_days_failed", "Days the last run failed to export.", float64(sum.Failed))
	gauge("last_run_rows_written", "Rows (allocations) the last run wrote.", float64(sum.Rows))
	gauge("last_run_bytes_written", "Parquet bytes the last run wrote.", float64(sum.Bytes))
	if n, ok := MissingDays(sum.Plan, sum.Done); ok && sum.Planned {
		gauge("archive_missing_days", "Days of the backfill window missing from the archive after the last run that planned.", float64(n))
		if n == 0 {
			// Kept by later pushes that lack it: the hole alert counts runs since the archive was whole.
			gauge("last_archive_complete_timestamp_seconds", "Unix time at which the last run that left no day of the window missing ended.", unix(r.End))
		}
	}
	gauge("last_run_days_remaining", "Days of this cluster the last run left for the next one because it reached its budget "+
		"(RUN_BUDGET, MAX_CLUSTER_DAYS_PER_RUN); they count in archive_missing_days too.", float64(sum.Remaining))
	if r.Progressed {
		// Kept likewise: the hole alert counts runs since the backlog last shrank.
		gauge("last_backlog_progress_timestamp_seconds", "Unix time at which the last run that stopped at its budget "+
			"and shrank this cluster's backlog ended.", unix(r.End))
	}
	// One series per scheduled run: a pod retry pushes the same label, a new run replaces the
	// family, so the previous run's series goes stale.
	id := cmp.Or(r.RunID, r.Start.UTC().Format(time.RFC3339Nano))
	vec("run_start_timestamp_seconds", "Unix time at which the latest pod attempt of the scheduled run (label run: the Job name) started.",
		"run").WithLabelValues(id).Set(unix(r.Start))
	req := vec("last_run_kubecost_requests", "Kubecost Allocation API requests of the last run, by outcome (ok, retried, split, failed).", "outcome")
	for o, n := range r.Requests {
		req.WithLabelValues(o).Set(float64(n))
	}
	if r.DaysWithoutIdle != nil {
		gauge("last_run_days_without_idle", "Days of the last run that Kubecost returned with allocations but no idle row, "+
			"though idle was asked for (usually KUBECOST_API_FLAVOR does not match the server).", float64(*r.DaysWithoutIdle))
	}
	vec("build_info", "Always 1; labels carry the exporter's version.", "version").WithLabelValues(exporter.Version).Set(1)
	return reg
}
