package exporter

import (
	"slices"
	"time"
)

const day = 24 * time.Hour

// Midnight truncates t to the start of its UTC day.
func Midnight(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// BackfillWindow returns the first and the last day (both inclusive, UTC
// midnights) that a run at now may export (CONTRACT §2): from
// midnight(now − days·24h + 1 day) to midnight(now − 2 days). The newest day
// is the day before yesterday, which Kubecost has had about 48 hours to
// settle; a window of N days therefore holds N−2 days, so N ≥ 3 exports at
// least one.
func BackfillWindow(now time.Time, days int) (first, last time.Time) {
	first = Midnight(now.Add(-time.Duration(days) * day).Add(day))
	last = Midnight(now.Add(-2 * day))
	return first, last
}

// Plan is the outcome of comparing Kubecost with the bucket.
type Plan struct {
	First, Last time.Time   // the backfill window, inclusive
	Available   []time.Time // days Kubecost has, inside the window
	Present     []time.Time // days of this cluster already stored, inside the window
	Missing     []time.Time // days to export, oldest first
}

// PlanDays decides which days to export. It is pure: now, the window
// length, Kubecost's available days and the keys already stored fully
// determine the result. Keys of other clusters, codecs we do not know and
// days outside the window are ignored; a day stored with any known codec
// counts as present, so switching codec never duplicates a day in Athena.
func PlanDays(now time.Time, backfillDays int, available []time.Time, keys []string, layout Layout) Plan {
	p := Plan{}
	p.First, p.Last = BackfillWindow(now, backfillDays)
	in := func(d time.Time) bool { return !d.Before(p.First) && !d.After(p.Last) }

	present := map[time.Time]bool{}
	for _, k := range keys {
		if d, ok := layout.ParseDay(k); ok && in(d) {
			present[d] = true
		}
	}
	seen := map[time.Time]bool{}
	for _, d := range available {
		d = Midnight(d)
		if !in(d) || seen[d] {
			continue
		}
		seen[d] = true
		p.Available = append(p.Available, d)
		if !present[d] {
			p.Missing = append(p.Missing, d)
		}
	}
	for d := range present {
		p.Present = append(p.Present, d)
	}
	for _, s := range [][]time.Time{p.Available, p.Present, p.Missing} {
		slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	}
	return p
}
