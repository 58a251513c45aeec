package app_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
)

// heldDays is a source holding the n days up to yesterday (as a Kubecost
// with aggregator.retention1d = n does), and the settled ones among them.
func heldDays(n int) (*memSource, []time.Time) {
	src := &memSource{days: map[time.Time]fetchFunc{}}
	_, last := exporter.Window(now, backfillDays, exporter.DefaultSettle)
	var settled []time.Time
	for i := 1; i <= n; i++ {
		d := exporter.Midnight(now).AddDate(0, 0, -i)
		src.days[d] = rows(d.Format(time.DateOnly), 2)
		if !d.After(last) {
			settled = append(settled, d)
		}
	}
	slices.SortFunc(settled, time.Time.Compare)
	return src, settled
}

// TestRunBacklogInRuns: a first export with all available days and a
// budget of cluster-days writes the oldest days and leaves the rest; the
// next runs, without AllAvailable (the daily CronJob), go on where it
// stopped until every settled day is stored. No run is a failure.
func TestRunBacklogInRuns(t *testing.T) {
	t.Parallel()
	src, settled := heldDays(40)
	store := newMemStore()
	o := options(src, store)
	o.Backlog = exporter.Backlog{MaxDays: 400, AllAvailable: true}
	o.Budget = app.Budget{ClusterDays: 15}
	sum, err := app.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if from, _ := exporter.Window(now, 400, exporter.DefaultSettle); !src.availFrom.Equal(from) {
		t.Errorf("availability asked from %s, want 400 days back (%s)", src.availFrom.Format(time.DateOnly), from.Format(time.DateOnly))
	}
	if got := src.fetchedDays(); !slices.EqualFunc(got, settled[:15], time.Time.Equal) {
		t.Errorf("first run fetched %v, want the 15 oldest %v", dates(got), dates(settled[:15]))
	}
	c := sum.Clusters[0]
	if sum.Remaining() != len(settled)-15 || !slices.EqualFunc(c.Remaining, settled[15:], time.Time.Equal) {
		t.Errorf("remaining %v, want %v", dates(c.Remaining), dates(settled[15:]))
	}
	if sum.Stop != "MAX_CLUSTER_DAYS_PER_RUN=15 reached" || !sum.Progressed(c) {
		t.Errorf("stop %q, progressed %v", sum.Stop, sum.Progressed(c))
	}

	// The next run keeps to BACKFILL_PERIOD_DAYS, yet finds the gap the
	// first one left and goes on with it, oldest first.
	src.fetched = nil
	o.Backlog.AllAvailable = false
	if sum, err = app.Run(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if got := src.fetchedDays(); !slices.EqualFunc(got, settled[15:30], time.Time.Equal) {
		t.Errorf("second run fetched %v, want %v", dates(got), dates(settled[15:30]))
	}
	if sum.Remaining() != len(settled)-30 {
		t.Errorf("second run left %d days, want %d", sum.Remaining(), len(settled)-30)
	}

	src.fetched = nil
	o.Budget = app.Budget{}
	if sum, err = app.Run(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if got := src.fetchedDays(); !slices.EqualFunc(got, settled[30:], time.Time.Equal) {
		t.Errorf("third run fetched %v, want %v", dates(got), dates(settled[30:]))
	}
	if sum.Remaining() != 0 || sum.Stop != "" || sum.Progressed(sum.Clusters[0]) {
		t.Errorf("third run: remaining %d, stop %q", sum.Remaining(), sum.Stop)
	}
	want := map[time.Time][]string{}
	for _, d := range settled {
		want[d] = wantNames(d.Format(time.DateOnly), 2)
	}
	assertStored(t, store, want)

	// Once done, the daily run asks for its window alone.
	src.fetched = nil
	first, _ := exporter.Window(now, backfillDays, exporter.DefaultSettle)
	if _, err = app.Run(t.Context(), o); err != nil || len(src.fetchedDays()) != 0 || !src.availFrom.Equal(first) {
		t.Errorf("after the backlog: err %v, fetched %v, availability from %s", err, dates(src.fetchedDays()), src.availFrom.Format(time.DateOnly))
	}
}

// TestRunTimeBudget: RUN_BUDGET stops handing out days once the run has
// lasted that long; the first day always starts, so a run never stalls.
func TestRunTimeBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		budget time.Duration
		want   int
	}{{time.Hour, 3}, {time.Nanosecond, 1}} {
		src, settled := heldDays(20)
		o := options(src, newMemStore())
		o.Backlog = exporter.Backlog{MaxDays: 400, AllAvailable: true}
		// Every reading of the clock is 25 minutes later than the last.
		var mu sync.Mutex
		clock := now
		o.Budget = app.Budget{Time: tc.budget, Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(25 * time.Minute)
			return clock
		}}
		sum, err := app.Run(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := src.fetchedDays(); !slices.EqualFunc(got, settled[:tc.want], time.Time.Equal) {
			t.Errorf("budget %s: fetched %v, want %v", tc.budget, dates(got), dates(settled[:tc.want]))
		}
		if sum.Remaining() != len(settled)-tc.want || sum.Stop != "RUN_BUDGET="+tc.budget.String()+" reached" {
			t.Errorf("budget %s: remaining %d, stop %q", tc.budget, sum.Remaining(), sum.Stop)
		}
	}
}

// TestRunBudgetNoProgress: a budgeted run whose days all fail left its
// backlog as it was: that is not progress.
func TestRunBudgetNoProgress(t *testing.T) {
	t.Parallel()
	src, settled := heldDays(20)
	for _, d := range settled[:3] {
		src.days[d] = rows("x", 0) // a day with no rows fails
	}
	o := options(src, newMemStore())
	o.Backlog = exporter.Backlog{MaxDays: 400, AllAvailable: true}
	o.Budget = app.Budget{ClusterDays: 3}
	sum, err := app.Run(t.Context(), o)
	if err == nil || sum.Remaining() != len(settled)-3 || sum.Progressed(sum.Clusters[0]) {
		t.Errorf("err %v, remaining %d, progressed %v; want a failure, %d remaining, no progress",
			err, sum.Remaining(), sum.Progressed(sum.Clusters[0]), len(settled)-3)
	}
}

// TestRunFleetBacklog: a federated fleet's first backfill under a budget
// of cluster-days goes oldest first across the clusters, every cluster
// progresses, and the next run asks Kubecost once more (for the gap, for
// every cluster at once) and goes on.
func TestRunFleetBacklog(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "b", "c"}
	srcs := map[string]*memSource{}
	var settled []time.Time
	for _, id := range ids {
		srcs[id], settled = heldDays(20)
	}
	var asked [][2]time.Time
	o := options(nil, newMemStore())
	o.Available = func(_ context.Context, from, to time.Time) (map[string][]exporter.DayTotal, error) {
		asked = append(asked, [2]time.Time{from, to})
		out := map[string][]exporter.DayTotal{}
		for id, s := range srcs {
			days, _ := s.AvailableDays(t.Context(), from, to)
			out[id] = days
		}
		return out, nil
	}
	o.Clusters = []app.Cluster{
		fleetMember("a", "111122223333", "us-east-1", "alpha", srcs["a"]),
		fleetMember("b", "111122223333", "us-east-1", "beta", srcs["b"]),
		fleetMember("c", "444455556666", "eu-west-1", "gamma", srcs["c"]),
	}
	o.Backlog = exporter.Backlog{MaxDays: 400, AllAvailable: true}
	o.Budget = app.Budget{ClusterDays: 25}
	sum, err := app.Run(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	// 25 cluster-days: the 8 oldest days of all three, then day 9 of "a".
	for i, id := range ids {
		want := settled[:8]
		if id == "a" {
			want = settled[:9]
		}
		if got := srcs[id].fetchedDays(); !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Errorf("%s fetched %v, want %v", id, dates(got), dates(want))
		}
		if c := sum.Clusters[i]; !sum.Progressed(c) || len(c.Remaining) != len(settled)-len(want) {
			t.Errorf("%s: progressed %v, %d remaining", id, sum.Progressed(c), len(c.Remaining))
		}
	}
	if len(asked) != 1 || sum.Remaining() != 3*len(settled)-25 {
		t.Errorf("asked %d times, %d remaining", len(asked), sum.Remaining())
	}

	asked = nil
	o.Backlog.AllAvailable = false
	o.Budget = app.Budget{}
	if sum, err = app.Run(t.Context(), o); err != nil || sum.Remaining() != 0 {
		t.Fatalf("second run: %v, %d remaining", err, sum.Remaining())
	}
	first, _ := exporter.Window(now, backfillDays, exporter.DefaultSettle)
	if len(asked) != 2 || !asked[1][0].Equal(settled[8]) || !asked[1][1].Equal(first) {
		t.Errorf("second run asked %v, want the window, then the gap from %s (the oldest cluster's) to the window", asked, settled[8].Format(time.DateOnly))
	}
	for _, id := range ids {
		if got := srcs[id].fetchedDays(); !slices.EqualFunc(got, settled, time.Time.Equal) {
			t.Errorf("%s fetched %v over both runs, want every settled day once, oldest first", id, dates(got))
		}
	}
}
