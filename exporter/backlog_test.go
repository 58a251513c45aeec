package exporter

import (
	"slices"
	"testing"
	"time"
)

// retention returns DayTotals for the n days before and including last:
// what a Kubecost 3.x aggregator with aggregator.retention1d = n answers.
func retention(last time.Time, n int) []DayTotal {
	var out []DayTotal
	for i := n - 1; i >= 0; i-- {
		out = append(out, DayTotal{Day: last.AddDate(0, 0, -i), TotalCost: float64(i)})
	}
	return out
}

func TestBacklogFrom(t *testing.T) {
	now := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC) // window 2026-02-18 .. 2026-03-01
	first := d("2026-02-18")
	oldest := first.AddDate(0, 0, -(400 - 15)) // 400 days back instead of 15
	cases := []struct {
		name   string
		b      Backlog
		days   int
		stored []time.Time
		want   time.Time
	}{
		{name: "zero value keeps to the window", want: first},
		{name: "MaxDays not above the window", b: Backlog{MaxDays: 15, AllAvailable: true}, want: first},
		{name: "all available reaches MaxDays back", b: Backlog{MaxDays: 400, AllAvailable: true}, want: oldest},
		{name: "all available with a short MaxDays", b: Backlog{MaxDays: 20, AllAvailable: true}, want: d("2026-02-13")},
		{name: "nothing stored before the window", b: Backlog{MaxDays: 400}, stored: span("2026-02-18", "2026-03-01"), want: first},
		{name: "stored history without a gap", b: Backlog{MaxDays: 400}, stored: span("2025-12-01", "2026-02-17"), want: first},
		{
			name: "a backfill stopped by its budget: the first gap", b: Backlog{MaxDays: 400},
			stored: span("2025-12-01", "2025-12-31"), want: d("2026-01-01"),
		},
		{
			name: "a hole in older history", b: Backlog{MaxDays: 400},
			stored: slices.DeleteFunc(span("2025-12-01", "2026-02-17"), func(t time.Time) bool { return t.Equal(d("2026-01-10")) }),
			want:   d("2026-01-10"),
		},
		{name: "stored days older than MaxDays do not count", b: Backlog{MaxDays: 30}, stored: span("2025-01-01", "2025-01-31"), want: first},
		{name: "an empty window reaches nowhere", b: Backlog{MaxDays: 400, AllAvailable: true}, days: 3, want: d("2026-03-02")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 15
			if c.days != 0 {
				n = c.days
			}
			if got := BacklogFrom(now, n, DefaultSettle, c.b, c.stored); !got.Equal(c.want) {
				t.Errorf("BacklogFrom = %s, want %s", got.Format(time.DateOnly), c.want.Format(time.DateOnly))
			}
		})
	}
}

// TestPlanAllAvailable is the first export against a Kubecost 3.x that
// holds 91 days: every settled day it holds, oldest first, and never a day
// after CCA's end of window.
func TestPlanAllAvailable(t *testing.T) {
	now := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	last := d("2026-03-01")
	// Kubecost also answers for days not yet settled (up to yesterday).
	avail := retention(d("2026-03-03"), 93)
	pol := Policy{Fingerprint: fp, Codec: Snappy, ReexportOnConfigChange: true, DriftTolerance: 0.001}
	p := PlanDays(PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Available: avail, Layout: prod,
		Policy: pol, Backlog: Backlog{MaxDays: 400, AllAvailable: true}})
	want := span(avail[0].Day.Format(time.DateOnly), "2026-03-01")
	if len(want) != 91 {
		t.Fatalf("test setup: %d settled days, want 91", len(want))
	}
	if got := fmtDays(exportDays(p)); !slices.Equal(got, fmtDays(want)) {
		t.Errorf("to export = %v\nwant %v", got, fmtDays(want))
	}
	if !p.Last.Equal(last) || !p.First.Equal(d("2026-02-18")) || !p.From.Equal(d("2025-01-29")) {
		t.Errorf("window %s..%s from %s", p.First.Format(time.DateOnly), p.Last.Format(time.DateOnly), p.From.Format(time.DateOnly))
	}
	for _, dp := range p.Exports() {
		if dp.Reason != ReasonMissing || dp.ETag != "" {
			t.Errorf("%s: reason %s etag %q, want a missing day created only if absent", dp.Day.Format(time.DateOnly), dp.Reason, dp.ETag)
		}
	}
	// Without the setting, the same server and bucket give CCA's 12 days.
	p = PlanDays(PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Available: avail, Layout: prod,
		Policy: pol, Backlog: Backlog{MaxDays: 400}})
	if got := fmtDays(exportDays(p)); !slices.Equal(got, fmtDays(span("2026-02-18", "2026-03-01"))) {
		t.Errorf("without AllAvailable: to export = %v", got)
	}
}

// TestPlanBacklogOnlyMissing: before the window a stored day is kept
// whatever its config, total or metadata (no HEAD was made for it); in the
// window the usual policy applies.
func TestPlanBacklogOnlyMissing(t *testing.T) {
	now := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	old, inWindow := d("2026-01-05"), d("2026-02-20")
	stored := []StoredObject{
		{Key: prod.Key(old, Snappy), Day: old, Codec: Snappy}, // listed only: no attributes
		ours(prod, inWindow, Snappy, "another-fingerprint", 1),
	}
	p := PlanDays(PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Available: retention(d("2026-03-01"), 91),
		Stored: stored, Layout: prod, Backlog: Backlog{MaxDays: 400, AllAvailable: true},
		Policy: Policy{Fingerprint: fp, Codec: Zstd, ReexportOnConfigChange: true, ReexportLegacy: true, DriftTolerance: 0.001,
			Force: []time.Time{old}}})
	for _, dp := range p.Days {
		switch {
		case dp.Day.Equal(old):
			if dp.Export || dp.Reason != ReasonCurrent || len(dp.Delete) > 0 {
				t.Errorf("old stored day: export %v reason %s delete %v, want kept", dp.Export, dp.Reason, dp.Delete)
			}
		case dp.Day.Equal(inWindow):
			if !dp.Export || dp.Reason != ReasonConfigChanged {
				t.Errorf("window day: export %v reason %s, want config-changed", dp.Export, dp.Reason)
			}
		case !dp.Export || dp.Reason != ReasonMissing:
			t.Errorf("%s: export %v reason %s, want missing", dp.Day.Format(time.DateOnly), dp.Export, dp.Reason)
		}
	}
	if len(p.Days) != 91 || !slices.ContainsFunc(p.Present, old.Equal) {
		t.Errorf("%d days planned, present %v", len(p.Days), fmtDays(p.Present))
	}
}

// TestPlanContinuesBacklog: a run without AllAvailable (the daily
// CronJob) after a first export that stopped at its budget goes on where
// it stopped, oldest first, and reaches no further back than the oldest
// stored day.
func TestPlanContinuesBacklog(t *testing.T) {
	now := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	avail := retention(d("2026-03-01"), 91) // 2025-12-01 .. 2026-03-01
	pol := Policy{Fingerprint: fp, Codec: Snappy, ReexportOnConfigChange: true, DriftTolerance: 0.001}
	// The budgeted first export wrote the 20 oldest days.
	written := span("2025-12-01", "2025-12-20")
	var stored []StoredObject
	for _, day := range written {
		stored = append(stored, ours(prod, day, Snappy, fp, 0))
	}
	in := PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Available: avail, Stored: stored, Layout: prod,
		Policy: pol, Backlog: Backlog{MaxDays: 400}}
	p := PlanDays(in)
	if got, want := fmtDays(exportDays(p)), fmtDays(span("2025-12-21", "2026-03-01")); !slices.Equal(got, want) {
		t.Errorf("to export = %v\nwant %v", got, want)
	}
	if !p.From.Equal(d("2025-12-21")) {
		t.Errorf("From = %s, want the first gap 2025-12-21", p.From.Format(time.DateOnly))
	}
	// Once the backlog is done, the run keeps to its window again.
	in.Stored = nil
	for _, a := range avail {
		in.Stored = append(in.Stored, ours(prod, a.Day, Snappy, fp, a.TotalCost))
	}
	if p := PlanDays(in); len(p.Exports()) != 0 || !p.From.Equal(p.First) || len(p.Days) != 12 {
		t.Errorf("finished backlog: %d exports, from %s, %d days planned", len(p.Exports()), p.From.Format(time.DateOnly), len(p.Days))
	}
	// A bucket with nothing before the window: CCA's window only.
	in.Stored = nil
	if p := PlanDays(in); len(p.Exports()) != 12 {
		t.Errorf("fresh bucket without AllAvailable: %d exports, want 12", len(p.Exports()))
	}
}

// TestPlanBacklogProperties checks, over many runs, settings and stored
// sets, that the plan never exports a day after CCA's end of window or
// before MaxDays, exports oldest first, and that a plan without a backlog
// is exactly the one before backlogs existed.
func TestPlanBacklogProperties(t *testing.T) {
	pol := Policy{Fingerprint: fp, Codec: Snappy, ReexportOnConfigChange: true, DriftTolerance: 0.001}
	for h := 0; h < 24*40; h += 7 {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(h) * time.Hour)
		avail := retention(Midnight(now), 100)
		var stored []StoredObject
		for i, a := range avail {
			if (i*7+h)%5 == 0 {
				stored = append(stored, ours(prod, a.Day, Snappy, fp, a.TotalCost))
			}
		}
		for _, b := range []Backlog{{}, {MaxDays: 60}, {MaxDays: 400}, {MaxDays: 60, AllAvailable: true}, {MaxDays: 400, AllAvailable: true}} {
			in := PlanInput{Now: now, BackfillDays: 15, Settle: DefaultSettle, Available: avail, Stored: stored, Layout: prod, Policy: pol, Backlog: b}
			p := PlanDays(in)
			_, last := Window(now, 15, DefaultSettle)
			oldest, _ := Window(now, max(b.MaxDays, 15), DefaultSettle)
			ex := exportDays(p)
			if !slices.IsSortedFunc(ex, time.Time.Compare) {
				t.Fatalf("%s %+v: exports not oldest first", now, b)
			}
			for _, day := range ex {
				if day.After(last) || day.Before(oldest) {
					t.Fatalf("%s %+v: exports %s outside %s..%s", now, b, day.Format(time.DateOnly), oldest.Format(time.DateOnly), last.Format(time.DateOnly))
				}
			}
			if b.MaxDays == 0 {
				in.Backlog = Backlog{MaxDays: 15, AllAvailable: true}
				if q := PlanDays(in); !slices.EqualFunc(p.Days, q.Days, func(a, b DayPlan) bool { return a.Day.Equal(b.Day) && a.Reason == b.Reason }) {
					t.Fatalf("%s: MaxDays=BackfillDays changed the plan", now)
				}
			}
		}
	}
}
