package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pushgw"
)

// withRetention points h at a simulator that keeps days days of daily data,
// as a Kubecost 3.x aggregator does with aggregator.retention1d (91 in the
// kubecost/kubecost chart's values.yaml).
func withRetention(h *harness, days int) {
	sim := newSim(h.t, kubecostsim.Config{Seed: 7, RetentionDays: days, Now: h.now})
	h.sim = sim
	h.env["KUBECOST_API_ENDPOINT"] = sim.URL
	h.env["BACKFILL_PERIOD_DAYS"] = "15"
}

// settledDays is every day the simulator holds that ended at least 48
// hours before at, oldest first: what a first export must take.
func settledDays(sim *kubecostsim.Server, at time.Time) []time.Time { return settledOf(sim.Sim, at) }

func settledOf(sim *kubecostsim.Sim, at time.Time) []time.Time {
	_, last := exporter.Window(at, 15, exporter.DefaultSettle)
	return slices.DeleteFunc(sim.AvailableDays(), func(d time.Time) bool { return d.After(last) })
}

// storedDays is the days of prod stored in the bucket, oldest first.
func (h *harness) storedDays() []time.Time {
	var out []time.Time
	for k := range h.objects() {
		if d, _, ok := prod.ParseKey(k); ok {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

func dayList(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Format(time.DateOnly)
	}
	return out
}

// writtenOrder is the days of the run's "day written" lines, in log order.
func writtenOrder(t *testing.T, logs string) []time.Time {
	t.Helper()
	var out []time.Time
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "day written" {
			continue
		}
		d, err := time.Parse(time.DateOnly, m["day"].(string))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// TestFirstExportAllAvailable: against a server holding 91 days, the first
// export with BACKFILL_ALL_AVAILABLE writes every settled day, oldest
// first, and never a day that has not settled; the availability query
// over 400 days is one request.
func TestFirstExportAllAvailable(t *testing.T) {
	h := newHarness(t)
	withRetention(h, 91)
	want := settledDays(h.sim, now)
	if len(want) != 89 {
		t.Fatalf("the simulator holds %d settled days, want 89 (91 held, the last two not settled at 10:00)", len(want))
	}
	code, logs := h.run(map[string]string{"BACKFILL_ALL_AVAILABLE": "true"})
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	if got := h.storedDays(); !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("stored %d days %v..., want the %d settled days", len(got), dayList(got[:min(3, len(got))]), len(want))
	}
	if got := writtenOrder(t, logs); !slices.IsSortedFunc(got, time.Time.Compare) || len(got) != len(want) {
		t.Errorf("days written in the order %v, want oldest first", dayList(got))
	}
	// One availability query reached 400 days back; the rest asked for one day each.
	var availability []url.Values
	for _, r := range h.sim.Sim.Requests() {
		if r.Query.Get("aggregate") == "cluster" {
			availability = append(availability, r.Query)
		}
	}
	from, _ := exporter.Window(now, 400, exporter.DefaultSettle)
	if len(availability) != 1 || !strings.HasPrefix(availability[0].Get("window"), from.Format(time.RFC3339)) {
		t.Errorf("availability queries %v, want one from %s", availability, from.Format(time.RFC3339))
	}
	s := summaryOf(t, logs)
	if s["days_written"] != float64(len(want)) || s["days_remaining"] != nil {
		t.Errorf("summary %v", s)
	}

	// Without the setting (the daily CronJob), the next run keeps to its
	// window: nothing is missing, nothing is asked before it.
	h.sim.Sim.ResetRequests()
	if code, logs := h.run(nil); code != cli.ExitOK || summaryOf(t, logs)["days_written"] != 0.0 {
		t.Fatalf("second run: exit %d\n%s", code, logs)
	}
	first, _ := exporter.Window(now, 15, exporter.DefaultSettle)
	for _, r := range h.sim.Sim.Requests() {
		if w := r.Query.Get("window"); !strings.HasPrefix(w, first.Format(time.RFC3339)) {
			t.Errorf("the daily run asked for window %s, want its own from %s", w, first.Format(time.DateOnly))
		}
	}
}

// TestFirstExportAllAvailableGen3: the same first export through a Kubecost
// 3.x frontend (its /model/ proxy to the aggregator) with the 3.x chart's
// default retention, aggregator.retention1d = 91 (kubecost/values.yaml):
// the 400-day availability query passes the proxy, and every settled day
// is written.
func TestFirstExportAllAvailableGen3(t *testing.T) {
	h := newHarness(t)
	g := kubecostsim.NewGen3Server(kubecostsim.Config{Seed: 7, RetentionDays: 91, Now: h.now}, kubecostsim.Gen3Config{})
	t.Cleanup(g.Close)
	h.env["KUBECOST_API_ENDPOINT"] = g.URL
	h.env["BACKFILL_PERIOD_DAYS"] = "15"
	want := settledOf(g.Sim, now)
	code, logs := h.run(map[string]string{"BACKFILL_ALL_AVAILABLE": "true"})
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	if got := h.storedDays(); !slices.EqualFunc(got, want, time.Time.Equal) || len(got) != 89 {
		t.Fatalf("stored %d days, want the %d settled days of 91 held", len(got), len(want))
	}
}

// TestBudgetedBackfill: a first export stopped by its budget exits 0,
// logs and pushes the days it left and shows days_remaining; the next
// runs, daily ones without BACKFILL_ALL_AVAILABLE, go on where it stopped
// until every settled day is stored, and then the archive is complete.
func TestBudgetedBackfill(t *testing.T) {
	h := newHarness(t)
	withRetention(h, 91)
	gw := pushgw.Start(t)
	h.env["PUSHGATEWAY_URL"] = gw.URL
	want := settledDays(h.sim, now)

	code, logs := h.run(map[string]string{"BACKFILL_ALL_AVAILABLE": "true", "MAX_CLUSTER_DAYS_PER_RUN": "40"})
	if code != cli.ExitOK {
		t.Fatalf("budgeted first run: exit %d, want 0\n%s", code, logs)
	}
	if got := h.storedDays(); !slices.EqualFunc(got, want[:40], time.Time.Equal) {
		t.Fatalf("first run stored %v, want the 40 oldest settled days", dayList(got))
	}
	s := summaryOf(t, logs)
	if s["msg"] != "run summary: ok" || s["days_remaining"] != float64(len(want)-40) || s["budget"] != "MAX_CLUSTER_DAYS_PER_RUN=40 reached" {
		t.Errorf("summary %v, want ok with days_remaining %d", s, len(want)-40)
	}
	if !strings.Contains(logs, `"msg":"run budget reached`) {
		t.Errorf("no budget line in the logs")
	}
	g := gw.Group(group)
	if v := gauge(t, g, "last_run_days_remaining", nil); v != float64(len(want)-40) {
		t.Errorf("pushed days remaining %v, want %d", v, len(want)-40)
	}
	if v := gauge(t, g, "archive_missing_days", nil); v != float64(len(want)-40) {
		t.Errorf("pushed missing days %v, want %d", v, len(want)-40)
	}
	gauge(t, g, "last_backlog_progress_timestamp_seconds", nil)
	if gauge(t, g, "last_run_success", nil) != 1 {
		t.Errorf("a budgeted run is pushed as a failure")
	}

	// The daily run, a day later, continues the backlog with the same
	// budget, oldest first: its window's days wait behind older ones.
	later := now.Add(24 * time.Hour)
	h.now = func() time.Time { return later }
	code, logs = h.run(map[string]string{"MAX_CLUSTER_DAYS_PER_RUN": "40"})
	if code != cli.ExitOK {
		t.Fatalf("second run: exit %d\n%s", code, logs)
	}
	wantLater := settledDays(h.sim, later)
	// The simulator's clock did not move: it still holds the same days,
	// and the one that settled since is among them.
	if got := h.storedDays(); !slices.EqualFunc(got, want[:80], time.Time.Equal) {
		t.Fatalf("second run stored up to %v, want the 80 oldest", dayList(got[len(got)-1:]))
	}
	if s := summaryOf(t, logs); s["days_remaining"] != float64(len(wantLater)-80) {
		t.Errorf("second run summary %v, want days_remaining %d", s, len(wantLater)-80)
	}

	code, logs = h.run(nil)
	if code != cli.ExitOK {
		t.Fatalf("third run: exit %d\n%s", code, logs)
	}
	if got := h.storedDays(); !slices.EqualFunc(got, wantLater, time.Time.Equal) {
		t.Fatalf("after the third run %d days stored, want %d", len(got), len(wantLater))
	}
	g = gw.Group(group)
	if gauge(t, g, "archive_missing_days", nil) != 0 || gauge(t, g, "last_run_days_remaining", nil) != 0 {
		t.Errorf("the finished backfill still reports missing or remaining days")
	}
	gauge(t, g, "last_archive_complete_timestamp_seconds", nil)
	if s := summaryOf(t, logs); s["days_remaining"] != nil {
		t.Errorf("third run summary %v has days_remaining", s)
	}
}

// TestRunAllAvailableFlag: `run --all-available` is BACKFILL_ALL_AVAILABLE
// on the command line; any other argument is still refused.
func TestRunAllAvailableFlag(t *testing.T) {
	// Main has the real clock: so has this simulator.
	sim := kubecostsim.NewServer(kubecostsim.Config{Seed: 7, RetentionDays: 30})
	t.Cleanup(sim.Close)
	dir := t.TempDir()
	env := map[string]string{
		"OUTPUT_DIR": dir, "CLUSTER_ID": clusterARN, "KUBECOST_API_ENDPOINT": sim.URL,
		"LOG_FORMAT": "json", "DRY_RUN": "true",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var out, errs bytes.Buffer
	if code := cli.Main(context.Background(), []string{"run", "--all-available"}, lookup, &out, &errs); code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, errs.String())
	}
	s := summaryOf(t, errs.String())
	if s["days_planned"] != float64(len(settledDays(sim, time.Now()))) {
		t.Errorf("run --all-available planned %v days, want every settled day of 30 held (%d)", s["days_planned"], len(settledDays(sim, time.Now())))
	}
	errs.Reset()
	if code := cli.Main(context.Background(), []string{"run", "--all-available", "now"}, lookup, &out, &errs); code != cli.ExitConfig {
		t.Errorf("run --all-available now: exit %d, want 2", code)
	}
}

// TestFederatedBudgetedBackfill: a federated primary whose clusters keep
// 14 to 30 days. The first export with every available day and a budget
// of cluster-days writes the oldest cluster-days of the whole fleet (one
// availability query for every cluster over 400 days), and a daily run
// then finishes every cluster.
func TestFederatedBudgetedBackfill(t *testing.T) {
	h := newFleetHarness(t, nil)
	h.env["BACKFILL_PERIOD_DAYS"] = "15"
	_, last := exporter.Window(now, 15, exporter.DefaultSettle)
	type clusterDay struct {
		key string
		day time.Time
	}
	var want []clusterDay
	for _, m := range h.fleet.Fleet.Members() {
		for _, d := range h.fleet.Fleet.AvailableDays(m.Config.ClusterName) {
			if !d.After(last) {
				want = append(want, clusterDay{layoutOf(m).Key(d, exporter.Snappy), d})
			}
		}
	}
	code, logs := h.run(map[string]string{"BACKFILL_ALL_AVAILABLE": "true", "MAX_CLUSTER_DAYS_PER_RUN": "30"})
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	if s := summaryOf(t, logs); s["days_written"] != 30.0 || s["days_remaining"] != float64(len(want)-30) {
		t.Errorf("summary %v, want 30 written and %d remaining", s, len(want)-30)
	}
	stored := h.objects()
	var newestStored, oldestLeft time.Time
	for _, cd := range want {
		if _, ok := stored[cd.key]; ok {
			newestStored = maxTime(newestStored, cd.day)
		} else if oldestLeft.IsZero() || cd.day.Before(oldestLeft) {
			oldestLeft = cd.day
		}
	}
	if len(stored) != 30 || newestStored.After(oldestLeft) {
		t.Errorf("%d objects; newest stored %s, oldest left %s: want the 30 oldest cluster-days", len(stored),
			newestStored.Format(time.DateOnly), oldestLeft.Format(time.DateOnly))
	}

	if code, logs = h.run(nil); code != cli.ExitOK {
		t.Fatalf("second run: exit %d\n%s", code, logs)
	}
	stored = h.objects()
	for _, cd := range want {
		if _, ok := stored[cd.key]; !ok {
			t.Errorf("after the second run %s is missing", cd.key)
		}
	}
	if len(stored) != len(want) {
		t.Errorf("%d objects, want %d", len(stored), len(want))
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
