package exporter

import "time"

const day = 24 * time.Hour

// DefaultSettle is how long after its end a day is first exported. Kubecost
// needs about 48 hours to reconcile a day with the cloud bill, and the
// Python exporter (CCA) exports a day only once it ended 48 hours ago.
const DefaultSettle = 48 * time.Hour

// The backfill window's length in days: the configuration
// (BACKFILL_PERIOD_DAYS) and the report's calendar share them. The
// configuration's struct tag holds the same default (tags must be
// literals); config's TestSharedDefaults ties them.
const (
	DefaultBackfillDays = 15
	MinBackfillDays     = 3 // with the default settle period, 3 days hold no settled day: CCA's empty window
)

// Midnight truncates t to the start of its UTC day.
func Midnight(t time.Time) time.Time { return t.UTC().Truncate(day) }

// Window returns the first and the last day (both inclusive, UTC
// midnights) that a run at now may export (CONTRACT §2). CCA asks Kubecost
// for window=midnight(now − days·24h + 1 day),midnight(now − 48h) and
// Kubecost treats the end as exclusive; settle generalises the 48 hours.
// So the newest day is the latest day that ended at least settle ago. When
// the window holds no day (days=3 with 48h), last is before first.
func Window(now time.Time, days int, settle time.Duration) (first, last time.Time) {
	first = Midnight(now.Add(-time.Duration(days) * day).Add(day))
	last = Midnight(now.Add(-settle)).Add(-day)
	return first, last
}

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

// Active reports whether b reaches past a backfill window of backfillDays
// at all: the one test of every caller that lists, asks or plans beyond it.
func (b Backlog) Active(backfillDays int) bool { return b.MaxDays > backfillDays }

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
	if !b.Active(backfillDays) || last.Before(first) {
		return first
	}
	oldest, _ := Window(now, b.MaxDays, settle)
	if b.AllAvailable {
		return oldest
	}
	have := map[time.Time]bool{}
	start := first // the oldest stored day before the window
	for _, d := range stored {
		if d = Midnight(d); !d.Before(oldest) && d.Before(first) {
			have[d] = true
			if d.Before(start) {
				start = d
			}
		}
	}
	for d := start; d.Before(first); d = d.AddDate(0, 0, 1) {
		if !have[d] {
			return d
		}
	}
	return first
}
