package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// A federated Kubecost (Kubecost 2.x Federated ETL / Aggregator) serves
// every cluster's allocations from one primary. RunFleet exports each
// mapped cluster as Run exports one: under its own keys, with its own
// plan, each of its days fetched with a query for that cluster alone, so
// the primary never builds a fleet-day in one response. The clusters share
// one availability query, one listing per account/region prefix and one
// bound on the cluster-days in flight (Options.Concurrency).

// FleetMember is one cluster of a federated Kubecost.
type FleetMember struct {
	ID          string                    // Kubecost's cluster id (properties.cluster)
	ARN         string                    // its EKS cluster ARN
	Source      exporter.AllocationSource // its days, each fetched with the cluster filter
	Layout      exporter.Layout
	Projection  *schema.Projection
	NewEncoder  EncoderFactory
	Fingerprint string            // its config fingerprint (the ARN is part of it)
	Metadata    map[string]string // added to its objects' metadata
}

// FleetDays is the availability query of a federated Kubecost: per cluster
// id, the days in [from, to) with data and that cluster's day totals.
type FleetDays func(ctx context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error)

// FleetOptions wires one federated run. The embedded Options hold what the
// clusters share; their Source, Layout, Projection, NewEncoder, Metadata
// and Reexport.Fingerprint are each member's.
type FleetOptions struct {
	Options
	Days    FleetDays
	Members []FleetMember
	// FailOnUnmapped makes clusters that Kubecost reports but the map
	// lacks an error (after the mapped ones are exported), not a warning.
	FailOnUnmapped bool
}

// ClusterResult is what happened to one member.
type ClusterResult struct {
	ID, ARN string
	Summary       // its plan and days; a day that could not be planned is a failed day
	PlanErr error // why the cluster could not be planned, or nil
}

// FleetSummary is the outcome of a federated run.
type FleetSummary struct {
	Clusters []ClusterResult // in member order
	// Unmapped are the cluster ids Kubecost has days for in the window
	// that the map lacks: skipped, never exported under a wrong name.
	Unmapped []string
	Duration time.Duration
}

// Written counts the cluster-days uploaded successfully.
func (s FleetSummary) Written() (days int, rows, bytes int64) {
	for _, c := range s.Clusters {
		d, r, b := c.Written()
		days, rows, bytes = days+d, rows+r, bytes+b
	}
	return days, rows, bytes
}

// FailedClusterDays lists the failed cluster-days as "<id>/<YYYY-MM-DD>".
func (s FleetSummary) FailedClusterDays() []string {
	var out []string
	for _, c := range s.Clusters {
		for _, d := range c.Failed() {
			out = append(out, c.ID+"/"+day(d.Day))
		}
	}
	return out
}

// ErrUnmappedClusters is returned by RunFleet with FailOnUnmapped when
// Kubecost reported clusters that the map lacks.
var ErrUnmappedClusters = errors.New("kubecost reports clusters that the cluster map lacks")

// RunFleet plans and exports every member. One cluster's failure, in
// planning or in a day, does not stop the others; the error then wraps
// ErrDaysFailed (and lists the cluster-days in the summary). It wraps
// ErrUnmappedClusters when FailOnUnmapped is set and a cluster is unmapped.
func RunFleet(ctx context.Context, fo FleetOptions) (sum FleetSummary, err error) {
	fo.Options = fo.Options.withDefaults()
	start := time.Now()
	log := fo.Logger
	defer func() { sum.Duration = time.Since(start) }()

	now := fo.Now()
	first, last := exporter.Window(now, fo.BackfillDays, fo.Settle)
	for _, m := range fo.Members {
		sum.Clusters = append(sum.Clusters, ClusterResult{ID: m.ID, ARN: m.ARN, Summary: Summary{Plan: exporter.Plan{First: first, Last: last}}})
	}
	if last.Before(first) {
		log.Warn("the backfill window holds no settled day: nothing to export; raise BACKFILL_PERIOD_DAYS or lower SETTLE_HOURS",
			"backfill_days", fo.BackfillDays, "settle_hours", fo.Settle.Hours())
		return sum, nil
	}
	log.Info("planning the fleet", "window_first", day(first), "window_last", day(last), "clusters", len(fo.Members),
		"backfill_days", fo.BackfillDays, "settle_hours", fo.Settle.Hours())
	byCluster, err := fo.Days(ctx, first, last.Add(24*time.Hour))
	if err != nil {
		return sum, fmt.Errorf("ask Kubecost for available days: %w", err)
	}
	sum.Unmapped = unmapped(fo.Members, byCluster)
	for _, id := range sum.Unmapped {
		log.Warn("Kubecost reports a cluster that the cluster map lacks: skipped; add it to CLUSTER_ARNS or CLUSTER_MAP_FILE to export it",
			"kubecost_cluster", id, "days_available", len(byCluster[id]))
	}
	for _, m := range fo.Members {
		// A mistyped id looks exactly like this: say so once, by name.
		if len(byCluster[m.ID]) == 0 {
			log.Warn("Kubecost has no data in the window for a mapped cluster; check its id against Kubecost's cluster ids",
				"kubecost_cluster", m.ID, "cluster", m.ARN)
		}
	}

	opts := make([]Options, len(fo.Members))
	for i, m := range fo.Members {
		opts[i] = fo.member(m, byCluster[m.ID])
		if !fo.DryRun {
			abortStale(ctx, opts[i], first, last)
		}
	}
	planFleet(ctx, opts, &sum, now, first, last)
	if fo.DryRun {
		for i := range sum.Clusters {
			logDryRun(opts[i].Logger, sum.Clusters[i].Plan)
		}
		return sum, fleetErr(fo, sum)
	}

	var tasks []task
	for i := range sum.Clusters {
		removeLeftovers(ctx, opts[i], sum.Clusters[i].Plan)
		for _, dp := range sum.Clusters[i].Plan.Exports() {
			tasks = append(tasks, task{o: opts[i], dp: dp, member: i})
		}
	}
	// Oldest day first across the fleet, so that a run cut short leaves
	// the newest days, which Kubecost keeps longest, for the next one.
	slices.SortStableFunc(tasks, func(a, b task) int { return a.dp.Day.Compare(b.dp.Day) })
	if len(tasks) == 0 {
		log.Info("nothing to do: every available cluster-day is stored and current")
	}
	results := exportTasks(ctx, tasks, fo.Concurrency)
	for i, r := range results {
		c := &sum.Clusters[tasks[i].member]
		c.Days = append(c.Days, r)
	}
	for i := range sum.Clusters {
		slices.SortStableFunc(sum.Clusters[i].Days, func(a, b DayResult) int { return a.Day.Compare(b.Day) })
	}
	return sum, fleetErr(fo, sum)
}

// member is the single-cluster Options of m, whose Source reports the days
// of the fleet's availability query instead of asking again.
func (fo FleetOptions) member(m FleetMember, days []exporter.DayTotal) Options {
	o := fo.Options
	o.Source = knownDays{AllocationSource: m.Source, days: days}
	o.Layout, o.Projection, o.NewEncoder = m.Layout, m.Projection, m.NewEncoder
	o.Reexport.Fingerprint = m.Fingerprint
	o.Metadata = m.Metadata
	o.Logger = fo.Logger.With("cluster", m.ID)
	return o
}

// planFleet plans every cluster, listing each account/region prefix once.
// A cluster that cannot be planned (its prefix denied, say) gets each of
// its available days as a failed day, so the next run resumes them.
func planFleet(ctx context.Context, opts []Options, sum *FleetSummary, now, first, last time.Time) {
	listings := map[string][]string{}
	listErrs := map[string]error{}
	for i, o := range opts {
		prefix := o.Layout.PartitionPrefix()
		if _, done := listings[prefix]; !done && listErrs[prefix] == nil {
			listings[prefix], listErrs[prefix] = listPartition(ctx, o.Store, o.Layout, first)
		}
		available := o.Source.(knownDays).days
		plan, err := exporter.Plan{}, listErrs[prefix]
		if err == nil {
			plan, err = planFrom(ctx, o, now, first, last, available, listings[prefix])
		}
		c := &sum.Clusters[i]
		if err != nil {
			c.PlanErr = err
			o.Logger.Error("cannot plan this cluster; its days will be retried by the next run", "error", err.Error())
			for _, d := range available {
				c.Days = append(c.Days, DayResult{Day: d.Day, Err: fmt.Errorf("plan: %w", err)})
			}
			continue
		}
		c.Plan = plan
		logPlan(o.Logger, plan)
	}
}

func fleetErr(fo FleetOptions, sum FleetSummary) error {
	var errs []error
	if failed := sum.FailedClusterDays(); len(failed) > 0 {
		errs = append(errs, fmt.Errorf("%w: %d cluster-days (first: %s)", ErrDaysFailed, len(failed), failed[0]))
	}
	if fo.FailOnUnmapped && len(sum.Unmapped) > 0 {
		errs = append(errs, fmt.Errorf("%w: %v", ErrUnmappedClusters, sum.Unmapped))
	}
	return errors.Join(errs...)
}

// unmapped returns the ids with days that no member has, sorted.
func unmapped(members []FleetMember, byCluster map[string][]exporter.DayTotal) []string {
	var out []string
	for id, days := range byCluster {
		if len(days) > 0 && !slices.ContainsFunc(members, func(m FleetMember) bool { return m.ID == id }) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}

// knownDays is a cluster's source whose days were already asked for.
type knownDays struct {
	exporter.AllocationSource
	days []exporter.DayTotal
}

func (k knownDays) AvailableDays(_ context.Context, from, to time.Time) ([]exporter.DayTotal, error) {
	return slices.DeleteFunc(slices.Clone(k.days), func(d exporter.DayTotal) bool {
		return d.Day.Before(from) || !d.Day.Before(to)
	}), nil
}
