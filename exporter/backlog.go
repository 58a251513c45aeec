package exporter

import (
	"slices"
	"time"
)

// DefaultBacklogDays is how far back a run looks for days Kubecost still
// holds (BACKFILL_MAX_DAYS): more than a year, above any retention the
// Kubecost 3.x chart ships (kubecost/kubecost, kubecost/values.yaml,
// aggregator.retention1d: 91 at every tag v3.0.0 to v3.2.1;
// kubecost/values-eks-cost-monitoring.yaml: 16 from v3.2.0), so "every
// day the server holds" is what the availability query returns.
const DefaultBacklogDays = 400

// Backlog is how far a run reaches past the backfill window.
type Backlog struct {
	// MaxDays bounds how far back, in the same count as BACKFILL_PERIOD_DAYS
	// (BACKFILL_MAX_DAYS); at most BackfillDays keeps to the window.
	MaxDays int
	// AllAvailable takes every day Kubecost holds in MaxDays
	// (BACKFILL_ALL_AVAILABLE: the first export). Without it a run reaches
	// back only to fill the gaps after the oldest stored day: what an
	// earlier backfill stopped by its budget left.
	AllAvailable bool
}

// BacklogFrom returns the first day a run at now looks at, given the days
// already stored (any order, any range). It is the backfill window's first
// day unless:
//   - AllAvailable: the first day of MaxDays, so the first export takes
//     every settled day the server still holds;
//   - this cluster has stored days older than the window (within MaxDays)
//     with a gap between the oldest of them and the window: the gap's
//     first day. An earlier backfill that stopped at its budget, oldest
//     first, left exactly such a gap, so the next run goes on where it
//     stopped without a state of its own. An archive without gaps costs
//     nothing: the run keeps to its window.
//
// Days before the window are only ever exported when missing (see
// PlanDays); the end of the window, CCA's, never moves.
func BacklogFrom(now time.Time, backfillDays int, settle time.Duration, b Backlog, stored []time.Time) time.Time {
	first, last := Window(now, backfillDays, settle)
	if b.MaxDays <= backfillDays || last.Before(first) {
		return first
	}
	oldest, _ := Window(now, b.MaxDays, settle)
	if b.AllAvailable {
		return oldest
	}
	have := map[time.Time]bool{}
	for _, d := range stored {
		if d = Midnight(d); !d.Before(oldest) && d.Before(first) {
			have[d] = true
		}
	}
	if len(have) == 0 {
		return first
	}
	start := slices.MinFunc(mapKeys(have), time.Time.Compare)
	for d := start; d.Before(first); d = d.AddDate(0, 0, 1) {
		if !have[d] {
			return d
		}
	}
	return first
}

func mapKeys(m map[time.Time]bool) []time.Time {
	out := make([]time.Time, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// decideBacklog plans day d before the backfill window: exported when
// nothing is stored for it, else kept as it is. Config changes, drift and
// FORCE_DATES are the window's business: checking them over a year would
// cost a HEAD per stored day on every run.
func decideBacklog(in PlanInput, d time.Time, total float64, objs []StoredObject) DayPlan {
	dp := DayPlan{Day: d, Key: in.Layout.Key(d, in.Codec), Total: total}
	if len(objs) == 0 {
		dp.Reason, dp.Export = ReasonMissing, true
		dp.Detail = "older than the backfill window (BACKFILL_PERIOD_DAYS): the server still holds it"
		return dp
	}
	dp.Reason, dp.Detail = ReasonCurrent, "older than the backfill window: kept as stored"
	return dp
}
