// Package app runs one export: plan the missing days of a set of clusters,
// then fetch, encode and upload each day. A single cluster (CLUSTER_ID) is
// a set of one; a federated Kubecost (CLUSTER_ARNS, CLUSTER_MAP_FILE) is a
// set of many, and both take the same path. The package sees Kubecost and
// the bucket only through the domain interfaces, so tests can run it
// against the simulator and any store.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Cluster is one cluster of a run: where its days come from and where and
// how they are written.
type Cluster struct {
	// ID is Kubecost's name for the cluster (properties.cluster) when the
	// run's Available query answers for several; empty for a single
	// cluster whose Source asks Kubecost without a cluster filter.
	ID          string
	ARN         string                    // its EKS cluster ARN
	Source      exporter.AllocationSource // its days; in a federated run, each fetched with the cluster filter
	Layout      exporter.Layout
	Projection  *schema.Projection
	NewEncoder  EncoderFactory
	Fingerprint string            // its config fingerprint (exporter.Fingerprint; the ARN is part of it)
	Metadata    map[string]string // added to its objects' metadata
}

// Availability is a federated Kubecost's availability query: per cluster
// id, the days in [from, to) with data and that cluster's day totals.
type Availability func(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error)

// Options wires one run: its clusters and what they share.
type Options struct {
	Clusters []Cluster
	// Available answers for every cluster at once, so that a fleet costs
	// one query and clusters Kubecost has but the run lacks can be named.
	// nil: each cluster asks its own Source (a single cluster asks once).
	Available Availability
	// FailOnUnmapped makes clusters that Available reports but the run
	// lacks an error (after the others are exported), not a warning.
	FailOnUnmapped bool

	Store        exporter.ObjectStore
	Codec        exporter.Codec
	BackfillDays int
	Settle       time.Duration // a day is exported once it ended this long ago (SETTLE_HOURS; CCA's is exporter.DefaultSettle)
	Concurrency  int           // cluster-days exported at once; <1 means 1
	ForceDays    []time.Time   // exported again even when present
	DryRun       bool
	Reexport     Reexport         // what to do with days already stored
	Now          func() time.Time // nil: time.Now
	// WallClock dates the clean-up of abandoned uploads, which compares
	// with the server's clock rather than the plan's; nil: time.Now.
	WallClock func() time.Time
	Logger    *slog.Logger // nil: discard
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WallClock == nil {
		o.WallClock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// job is one cluster with the options its run shares.
type job struct {
	*Options
	Cluster
	log *slog.Logger
}

// jobs pairs every cluster with the shared options. A cluster's log lines
// carry its Kubecost id when it has one, so a fleet's lines can be told
// apart and a single cluster's keep their fields.
func (o *Options) jobs() []job {
	out := make([]job, len(o.Clusters))
	for i, c := range o.Clusters {
		out[i] = job{Options: o, Cluster: c, log: o.Logger}
		if c.ID != "" {
			out[i].log = o.Logger.With("cluster", c.ID)
		}
	}
	return out
}

// Run plans and exports every cluster. One cluster's failure, in planning
// or in a day, does not stop the others; the error then wraps
// ErrDaysFailed. It wraps ErrUnmappedClusters with FailOnUnmapped when a
// cluster is unmapped, and is the cause itself when nothing could be
// planned (Kubecost unreachable, say).
func Run(ctx context.Context, o Options) (sum Summary, err error) {
	o = o.withDefaults()
	start := time.Now()
	log := o.Logger
	defer func() { sum.Duration = time.Since(start) }()

	// One reading of the clock: a run that straddles midnight must plan
	// against the same window it asked Kubecost about.
	now := o.Now()
	first, last := exporter.Window(now, o.BackfillDays, o.Settle)
	jobs := o.jobs()
	for _, c := range o.Clusters {
		sum.Clusters = append(sum.Clusters, ClusterResult{ID: c.ID, ARN: c.ARN, Plan: exporter.Plan{First: first, Last: last}})
	}
	if last.Before(first) {
		log.Warn("the backfill window holds no settled day: nothing to export; raise BACKFILL_PERIOD_DAYS or lower SETTLE_HOURS",
			"backfill_days", o.BackfillDays, "settle_hours", o.Settle.Hours(), "window_start", day(first), "window_end_exclusive", day(last.Add(24*time.Hour)))
		return sum, nil
	}
	log.Info("planning", "window_first", day(first), "window_last", day(last), "backfill_days", o.BackfillDays,
		"settle_hours", o.Settle.Hours(), "clusters", len(jobs))

	avail, err := o.availability(ctx, first, last.Add(24*time.Hour))
	if err != nil {
		return sum, fmt.Errorf("ask Kubecost for available days: %w", err)
	}
	if o.Available != nil {
		sum.Unmapped = unmapped(o.Clusters, avail)
		warnMapping(log, o.Clusters, sum.Unmapped, avail)
	}
	if !o.DryRun {
		for _, j := range jobs {
			abortStale(ctx, j, first, last)
		}
	}
	planAll(ctx, jobs, avail, &sum, now, first, last)
	if o.DryRun {
		for i, j := range jobs {
			logDryRun(j.log, sum.Clusters[i].Plan)
		}
		return sum, o.runErr(sum)
	}
	sum = exportAll(ctx, jobs, sum)
	return sum, o.runErr(sum)
}

// availability asks Kubecost once which days each cluster has.
func (o *Options) availability(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error) {
	if o.Available != nil {
		return o.Available(ctx, from, to)
	}
	out := map[string][]exporter.DayTotal{}
	for _, c := range o.Clusters {
		days, err := c.Source.AvailableDays(ctx, from, to)
		if err != nil {
			return nil, err
		}
		out[c.ID] = days
	}
	return out, nil
}

// exportAll removes the leftovers of earlier runs and exports the planned
// days of every cluster, oldest day first across the clusters, so that a
// run cut short leaves the newest days, which Kubecost keeps longest, for
// the next one.
func exportAll(ctx context.Context, jobs []job, sum Summary) Summary {
	var tasks []task
	for i, j := range jobs {
		removeLeftovers(ctx, j, sum.Clusters[i].Plan)
		for _, dp := range sum.Clusters[i].Plan.Exports() {
			tasks = append(tasks, task{job: j, dp: dp, cluster: i})
		}
	}
	if len(tasks) == 0 {
		if sum.Available() > 0 {
			jobs[0].Options.Logger.Info("nothing to do: every available day is stored and current")
		}
		return sum
	}
	slices.SortStableFunc(tasks, func(a, b task) int { return a.dp.Day.Compare(b.dp.Day) })
	results := exportTasks(ctx, tasks, jobs[0].Concurrency)
	for i, r := range results {
		c := &sum.Clusters[tasks[i].cluster]
		c.Days = append(c.Days, r)
	}
	for i := range sum.Clusters {
		slices.SortStableFunc(sum.Clusters[i].Days, func(a, b DayResult) int { return a.Day.Compare(b.Day) })
	}
	return sum
}

// runErr is the run's error after every cluster was tried.
func (o *Options) runErr(sum Summary) error {
	var errs []error
	if failed := sum.Failed(); len(failed) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d of %d (first: %s: %w)", ErrDaysFailed, len(failed), len(sum.days()),
			sum.FailedClusterDays()[0], failed[0].Err))
	}
	if cerrs := cleanupErrs(sum.days()); len(cerrs) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d (first: %w)", ErrCleanupFailed, len(cerrs), cerrs[0]))
	}
	if o.FailOnUnmapped && len(sum.Unmapped) > 0 {
		errs = append(errs, fmt.Errorf("%w: %v", ErrUnmappedClusters, sum.Unmapped))
	}
	return errors.Join(errs...)
}

// unmapped returns the ids with days that no cluster of the run has,
// sorted. An empty id is no cluster: it is where Kubecost puts rows whose
// clusters disagree, such as idle merged across clusters.
func unmapped(clusters []Cluster, byCluster map[string][]exporter.DayTotal) []string {
	var out []string
	for id, days := range byCluster {
		if id != "" && len(days) > 0 && !slices.ContainsFunc(clusters, func(c Cluster) bool { return c.ID == id }) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}

// warnMapping names, once each, the clusters Kubecost has that the run
// lacks, and the run's clusters Kubecost has nothing for.
func warnMapping(log *slog.Logger, clusters []Cluster, unmapped []string, byCluster map[string][]exporter.DayTotal) {
	for _, id := range unmapped {
		log.Warn("Kubecost reports a cluster that the cluster map lacks: skipped; add it to CLUSTER_ARNS or CLUSTER_MAP_FILE to export it",
			"kubecost_cluster", id, "days_available", len(byCluster[id]))
	}
	for _, c := range clusters {
		// A mistyped id looks exactly like this: say so once, by name.
		if len(byCluster[c.ID]) == 0 {
			log.Warn("Kubecost has no data in the window for a mapped cluster; check its id against Kubecost's cluster ids",
				"kubecost_cluster", c.ID, "cluster", c.ARN)
		}
	}
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

func days(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = day(t)
	}
	return out
}
