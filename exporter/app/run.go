// Package app runs one export: plan the missing days of a set of clusters (one for
// CLUSTER_ID, many for a federated Kubecost, on the same path), then fetch, encode and upload
// each day. It sees Kubecost and the bucket only through the domain interfaces, so tests run
// it against the simulator and any store.
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

// Cluster is one cluster of a run: where its days come from and where and how they are written.
type Cluster struct {
	// ID keys the cluster's days in Options.Available's answer: Kubecost's name for it
	// (properties.cluster) in a fleet, "" for a single cluster (SourceDays).
	ID          string
	ARN         string                    // its EKS cluster ARN
	Source      exporter.AllocationSource // its days; in a federated run, each fetched with the cluster filter
	Layout      exporter.Layout
	Projection  *schema.Projection
	NewEncoder  EncoderFactory
	Fingerprint string            // its config fingerprint (exporter.Fingerprint; the ARN is part of it)
	Metadata    map[string]string // added to its objects' metadata
	// Logger writes the cluster's lines; nil: the run's. In a fleet the wiring adds the
	// Kubecost id, so that its clusters' lines can be told apart.
	Logger *slog.Logger
}

// Availability is the run's availability query: per Cluster.ID, the days in [from, to) with
// data and their totals. A federated Kubecost answers for every cluster at once.
type Availability func(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error)

// SourceDays is the availability of a run of one cluster: src's days, under the id "".
func SourceDays(src exporter.AllocationSource) Availability {
	return func(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error) {
		days, err := src.AvailableDays(ctx, from, to)
		if err != nil {
			return nil, err
		}
		return map[string][]exporter.DayTotal{"": days}, nil
	}
}

// Options wires one run: its clusters and what they share.
type Options struct {
	Clusters []Cluster
	// Available (required) answers for every cluster at once, so that a fleet costs one query
	// and clusters Kubecost has but the run lacks can be named.
	Available Availability
	// FailOnUnmapped makes unmapped clusters an error (after the others are exported).
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
	// WallClock dates the clean-up of abandoned uploads, against the server's clock rather
	// than the plan's; nil: time.Now.
	WallClock func() time.Time
	Logger    *slog.Logger // nil: discard

	// Backlog reaches past the window for days Kubecost still holds: all of them (the first
	// export), or the gaps an earlier budgeted run left (exporter.BacklogFrom).
	Backlog exporter.Backlog
	// Budget stops the run early, the rest left for the next run; the zero value has no limit.
	Budget Budget

	budgetStart time.Time // when Run started, by Budget's clock
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WallClock == nil {
		o.WallClock = time.Now
	}
	if o.Budget.Now == nil {
		o.Budget.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// job is one cluster with what its planning and export need of the run.
type job struct {
	Cluster
	store  exporter.ObjectStore
	codec  exporter.Codec
	policy exporter.Policy // the run's re-export policy with this cluster's fingerprint
	log    *slog.Logger
}

func (o *Options) jobs() []job {
	out := make([]job, len(o.Clusters))
	for i, c := range o.Clusters {
		out[i] = job{Cluster: c, store: o.Store, codec: o.Codec, log: cmp.Or(c.Logger, o.Logger),
			policy: exporter.Policy{
				Fingerprint: c.Fingerprint, Codec: o.Codec,
				ReexportOnConfigChange: o.Reexport.OnConfigChange, DriftTolerance: o.Reexport.DriftTolerance,
				ReexportLegacy: o.Reexport.Legacy, Force: o.ForceDays,
			}}
	}
	return out
}

// Run plans and exports every cluster. One cluster's failure does not stop the others; the
// error then wraps ErrDaysFailed, or ErrUnmappedClusters (FailOnUnmapped), or is the cause
// itself when nothing could be planned (Kubecost unreachable, say).
func Run(ctx context.Context, o Options) (sum Summary, err error) {
	o = o.withDefaults()
	start := time.Now()
	log := o.Logger
	defer func() { sum.Duration = time.Since(start) }()

	// One reading of the clock: a run straddling midnight plans the window it asked about.
	now := o.Now()
	first, last := exporter.Window(now, o.BackfillDays, o.Settle)
	o.budgetStart = o.Budget.Now()
	jobs := o.jobs()
	for _, c := range o.Clusters {
		sum.Clusters = append(sum.Clusters, ClusterResult{ID: c.ID, ARN: c.ARN, Plan: exporter.Plan{First: first, Last: last}})
	}
	if last.Before(first) {
		log.Warn("the backfill window holds no settled day: nothing to export; raise BACKFILL_PERIOD_DAYS or lower SETTLE_HOURS",
			"backfill_days", o.BackfillDays, "settle_hours", o.Settle.Hours(), "window_start", day(first), "window_end_exclusive", day(last.Add(24*time.Hour)))
		return sum, nil
	}
	from := first
	if o.Backlog.AllAvailable {
		from = exporter.BacklogFrom(now, o.BackfillDays, o.Settle, o.Backlog, nil)
	}
	attrs := []any{"window_first", day(first), "window_last", day(last), "backfill_days", o.BackfillDays,
		"settle_hours", o.Settle.Hours(), "clusters", len(jobs)}
	if from.Before(first) {
		attrs = append(attrs, "all_available_from", day(from))
	}
	log.Info("planning", attrs...)

	if o.Available == nil {
		return sum, errors.New("app: Options.Available is nil (a single cluster's is app.SourceDays)")
	}
	avail, err := o.Available(ctx, from, last.Add(24*time.Hour))
	if err != nil {
		return sum, fmt.Errorf("ask Kubecost for available days: %w", err)
	}
	sum.Unmapped = unmapped(o.Clusters, avail)
	warnMapping(log, jobs, sum.Unmapped, avail, first, last)
	if !o.DryRun {
		olderThan := o.WallClock().Add(-staleUploadAge)
		for _, j := range jobs {
			abortStale(ctx, j, olderThan, first, last)
		}
	}
	planAll(ctx, &o, jobs, avail, &sum, now, first, last)
	if o.DryRun {
		for i, j := range jobs {
			logDryRun(j.log, sum.Clusters[i].Plan)
		}
	} else {
		sum = o.exportAll(ctx, jobs, sum)
	}
	return sum, o.runErr(sum)
}

// exportAll removes earlier runs' leftovers and exports every cluster's planned days, oldest
// first across clusters, so that a run cut short leaves the newest days, which Kubecost keeps
// longest, for the next one.
func (o *Options) exportAll(ctx context.Context, jobs []job, sum Summary) Summary {
	var tasks []task
	for i, j := range jobs {
		removeLeftovers(ctx, j, sum.Clusters[i].Plan)
		for _, dp := range sum.Clusters[i].Plan.Exports() {
			tasks = append(tasks, task{job: j, dp: dp, cluster: i})
		}
	}
	if len(tasks) == 0 {
		if sum.Available() > 0 {
			o.Logger.Info("nothing to do: every available day is stored and current")
		}
		return sum
	}
	// Each cluster's results and remaining days are in day order too.
	slices.SortStableFunc(tasks, func(a, b task) int { return a.dp.Day.Compare(b.dp.Day) })
	results, stop := exportTasks(ctx, tasks, o.Concurrency, o.budgetCheck())
	for i, r := range results {
		sum.Clusters[tasks[i].cluster].Days = append(sum.Clusters[tasks[i].cluster].Days, r)
	}
	return deferRest(o.Logger, sum, tasks[len(results):], stop)
}

// runErr is the run's error after every cluster was tried.
func (o *Options) runErr(sum Summary) error {
	var errs []error
	if failed := sum.Failed(); len(failed) > 0 {
		c := sum.Clusters[slices.IndexFunc(sum.Clusters, func(c ClusterResult) bool { return len(c.Failed()) > 0 })]
		errs = append(errs, fmt.Errorf("%w: %d of %d (first: %s of %s: %w)", ErrDaysFailed, len(failed), len(sum.days()),
			day(failed[0].Day), c.ARN, failed[0].Err))
	}
	if cerrs := cleanupErrs(sum.days()); len(cerrs) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d (first: %w)", ErrCleanupFailed, len(cerrs), cerrs[0]))
	}
	if o.FailOnUnmapped && len(sum.Unmapped) > 0 {
		errs = append(errs, fmt.Errorf("%w: %v", ErrUnmappedClusters, sum.Unmapped))
	}
	return errors.Join(errs...)
}

// unmapped returns, sorted, the ids with days that no cluster of the run has. The empty id
// is where Kubecost puts rows whose clusters disagree (idle merged across clusters).
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

// warnMapping names, once each, the clusters Kubecost has that the run lacks, and the run's
// clusters Kubecost has nothing for (what a mistyped id looks like).
func warnMapping(log *slog.Logger, jobs []job, unmapped []string, byCluster map[string][]exporter.DayTotal, first, last time.Time) {
	for _, id := range unmapped {
		log.Warn("Kubecost reports a cluster that the cluster map lacks: skipped; add it to CLUSTER_ARNS or CLUSTER_MAP_FILE to export it",
			"kubecost_cluster", id, "days_available", len(byCluster[id]))
	}
	for _, j := range jobs {
		if len(byCluster[j.ID]) == 0 {
			j.log.Warn("Kubecost has no data in the window for this cluster: nothing available to export; "+
				"with a cluster map, check its id against Kubecost's cluster ids",
				"window_first", day(first), "window_last", day(last))
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
