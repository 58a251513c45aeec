package exporter

import "time"

const day = 24 * time.Hour

// DefaultSettle is how long after its end a day is first exported: Kubecost needs about
// 48 hours to reconcile a day with the cloud bill, and the Python exporter (CCA) waits 48h.
const DefaultSettle = 48 * time.Hour

// The backfill window's length in days (BACKFILL_PERIOD_DAYS, the report's calendar). The
// config's struct tag repeats the default (tags are literals); TestSharedDefaults ties them.
const (
	DefaultBackfillDays = 15
	MinBackfillDays     = 3 // with the default settle period, 3 days hold no settled day: CCA's empty window
)

// Midnight truncates t to the start of its UTC day.
func Midnight(t time.Time) time.Time { return t.UTC().Truncate(day) }

// Window returns the first and last day (inclusive UTC midnights) a run at now may export
// (CONTRACT §2). CCA asks Kubecost for
// window=midnight(now − days·24h + 1 day),midnight(now − 48h), end exclusive; settle
// generalises the 48 hours, so the newest day is the latest that ended at least settle ago.
// An empty window (days=3 with 48h) has last before first.
func Window(now time.Time, days int, settle time.Duration) (first, last time.Time) {
	first = Midnight(now.Add(-time.Duration(days) * day).Add(day))
	last = Midnight(now.Add(-settle)).Add(-day)
	return first, last
}

// Backlog is how far a run reaches past the backfill window.
type Backlog struct {
	// MaxDays (BACKFILL_MAX_DAYS) bounds how far back, counted as BACKFILL_PERIOD_DAYS; at
	// most BackfillDays keeps to the window.
	MaxDays int
	// AllAvailable (BACKFILL_ALL_AVAILABLE: the first export) takes every day Kubecost holds
	// in MaxDays. Without it a run only fills the gaps after the oldest stored day, left by an
	// earlier backfill that ran out of budget.
	AllAvailable bool
}

// Active reports whether b reaches past a backfill window of backfillDays: the one test of
// every caller that lists, asks or plans beyond it.
func (b Backlog) Active(backfillDays int) bool { return b.MaxDays > backfillDays }

// BacklogFrom returns the first day a run at now looks at, given the stored days (any order
// and range): the window's first day unless
//   - AllAvailable: the first day of MaxDays, so the first export takes every settled day;
//   - stored days older than the window (within MaxDays) leave a gap before the window: the
//     gap's first day. A backfill that stopped at its budget, oldest first, leaves such a
//     gap, so the next run resumes without state of its own; no gap, no cost.
//
// Days before the window are only exported when missing (PlanDays); the window's end, CCA's,
// never moves.
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
