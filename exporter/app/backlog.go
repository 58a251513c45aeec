package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// Budget bounds one run, so that a large first backfill (500 clusters × 91 days is hours
// against a real aggregator) is done by several runs of a bounded pod. Oldest days go first,
// as the server drops them first; the next run's plan finds the rest missing.
type Budget struct {
	Time        time.Duration // RUN_BUDGET, from the run's start
	ClusterDays int           // MAX_CLUSTER_DAYS_PER_RUN
	// Now reads the clock Time is measured with; nil: time.Now.
	Now func() time.Time
}

// budgetCheck says, before the started+1-th task, why the run must stop there, or "". The
// first task always starts (exportTasks), so every run makes progress whatever its budget.
func (o *Options) budgetCheck() func(started int) string {
	b := o.Budget
	if b.Time <= 0 && b.ClusterDays <= 0 {
		return nil
	}
	return func(started int) string {
		if b.ClusterDays > 0 && started >= b.ClusterDays {
			return fmt.Sprintf("MAX_CLUSTER_DAYS_PER_RUN=%d reached", b.ClusterDays)
		}
		if b.Time > 0 && b.Now().Sub(o.budgetStart) >= b.Time {
			return fmt.Sprintf("RUN_BUDGET=%s reached", b.Time)
		}
		return ""
	}
}

// deferRest records the tasks a budget left for the next run and says so.
func deferRest(log *slog.Logger, sum Summary, rest []task, stop string) Summary {
	if len(rest) == 0 {
		return sum
	}
	sum.Stop = stop
	for _, t := range rest {
		c := &sum.Clusters[t.cluster]
		c.Remaining = append(c.Remaining, t.dp.Day)
	}
	log.Info("run budget reached: the remaining days are left for the next run, which goes on from the oldest",
		"budget", stop, "days_remaining", len(rest), "next_day", day(rest[0].dp.Day))
	return sum
}

// Remaining counts the cluster-days left for the next run by the budget.
func (s Summary) Remaining() int {
	return s.perCluster(func(c ClusterResult) int { return len(c.Remaining) })
}

// Progressed reports whether the run shrank c's backlog: it stopped at its budget with days
// of c left, after writing at least one day (of any cluster: oldest days go first across
// clusters), and none of c's days failed.
func (s Summary) Progressed(c ClusterResult) bool {
	written, _, _ := s.Written()
	return s.Stop != "" && len(c.Remaining) > 0 && written > 0 && c.PlanErr == nil && len(c.Failed()) == 0
}

// LookBack is the first day whose stored objects a run lists, and the first the report asks
// Kubecost about: MaxDays back when the run may reach into the backlog, else the window's.
func (o *Options) LookBack(now time.Time) time.Time {
	days := o.BackfillDays
	if o.Backlog.Active(days) {
		days = o.Backlog.MaxDays
	}
	first, _ := exporter.Window(now, days, o.Settle)
	return first
}

// extendAvailability asks Kubecost, once for every cluster, for the days before the window
// that a backlog reaches (a gap an earlier budgeted backfill left; none costs no query) and
// adds them to avail. When Kubecost cannot answer, the gap waits for the next run.
func (o *Options) extendAvailability(ctx context.Context, jobs []job, listings map[string][]string, avail map[string][]exporter.DayTotal, now, first time.Time) {
	if o.Backlog.AllAvailable || !o.Backlog.Active(o.BackfillDays) {
		return
	}
	from := first
	for _, j := range jobs {
		keys, ok := listings[j.Layout.PartitionPrefix()]
		if !ok {
			continue
		}
		var stored []time.Time
		for _, k := range keys {
			if d, _, ok := j.Layout.ParseKey(k); ok {
				stored = append(stored, d)
			}
		}
		if f := exporter.BacklogFrom(now, o.BackfillDays, o.Settle, o.Backlog, stored); f.Before(from) {
			from = f
		}
	}
	if !from.Before(first) {
		return
	}
	o.Logger.Info("an earlier backfill left days before the window: asking Kubecost for them",
		"from", day(from), "to", day(first.Add(-24*time.Hour)))
	ext, err := o.Available(ctx, from, first)
	if err != nil {
		o.Logger.Warn("cannot ask Kubecost for the days before the window; planning the window alone", "error", err.Error())
		return
	}
	for id, days := range ext {
		avail[id] = append(days, avail[id]...)
	}
}
