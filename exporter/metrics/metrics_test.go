package metrics_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/kubecost"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

func d(day int) time.Time { return time.Date(2026, 11, day, 0, 0, 0, 0, time.UTC) }

// exports plans the given days for export.
func exports(days ...time.Time) []exporter.DayPlan {
	var out []exporter.DayPlan
	for _, x := range days {
		out = append(out, exporter.DayPlan{Day: x, Reason: exporter.ReasonMissing, Export: true})
	}
	return out
}

func TestMissingDays(t *testing.T) {
	// The days a run stored: a failed day (bad) is not among them.
	ok := func(day int) []time.Time { return []time.Time{d(day)} }
	bad := func(int) []time.Time { return nil }
	cases := []struct {
		name string
		plan exporter.Plan
		days [][]time.Time
		want int
		ok   bool
	}{
		{"no plan", exporter.Plan{}, nil, 0, false},
		{"all stored", exporter.Plan{First: d(1), Last: d(5), Available: []time.Time{d(1), d(2), d(3), d(4), d(5)},
			Present: []time.Time{d(1), d(2), d(3), d(4), d(5)}}, nil, 0, true},
		{"written and failed", exporter.Plan{First: d(1), Last: d(5), Available: []time.Time{d(1), d(2), d(3), d(4), d(5)},
			Present: []time.Time{d(1), d(2)}, Days: exports(d(3), d(4), d(5))}, [][]time.Time{ok(3), bad(4), ok(5)}, 1, true},
		{"new cluster: days before the first known day are not holes", exporter.Plan{First: d(1), Last: d(10),
			Available: []time.Time{d(8), d(9), d(10)}, Days: exports(d(8), d(9), d(10))}, [][]time.Time{ok(8), ok(9), ok(10)}, 0, true},
		{"Kubecost lost a day the archive never got", exporter.Plan{First: d(1), Last: d(5),
			Available: []time.Time{d(4), d(5)}, Present: []time.Time{d(1), d(2), d(4), d(5)}}, nil, 1, true},
		{"dry run", exporter.Plan{First: d(1), Last: d(3), Available: []time.Time{d(1), d(2), d(3)},
			Days: exports(d(1), d(2), d(3))}, nil, 3, true},
		{"nothing anywhere", exporter.Plan{First: d(1), Last: d(3)}, nil, 0, true},
	}
	for _, tc := range cases {
		got, ok := metrics.MissingDays(tc.plan, slices.Concat(tc.days...))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: MissingDays = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRegistryRunSeries: the run label, and the archive-complete time only
// when the run planned and left no hole.
func TestRegistryRunSeries(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	end := start.Add(5 * time.Minute)
	full := exporter.Plan{First: d(1), Last: d(2), Available: []time.Time{d(1), d(2)}, Present: []time.Time{d(1), d(2)}}
	holed := exporter.Plan{First: d(1), Last: d(2), Available: []time.Time{d(1), d(2)}, Present: []time.Time{d(1)}}
	cases := []struct {
		name     string
		run      metrics.Run
		runLabel string
		complete bool
	}{
		{"complete", metrics.Run{Start: start, End: end, Cluster: metrics.Cluster{Plan: full, Planned: true}, RunID: "kse-1"}, "kse-1", true},
		{"hole", metrics.Run{Start: start, End: end, Cluster: metrics.Cluster{Plan: holed, Planned: true}, RunID: "kse-1"}, "kse-1", false},
		{"no plan, no RUN_ID", metrics.Run{Start: start, End: end, Err: errors.New("x")}, "2026-11-20T00:00:00Z", false},
	}
	for _, tc := range cases {
		fams, err := metrics.Registry(tc.run).Gather()
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]bool{}
		for _, f := range fams {
			byName[f.GetName()] = true
			if f.GetName() != "kubecost_s3_exporter_run_start_timestamp_seconds" {
				continue
			}
			m := f.GetMetric()
			if len(m) != 1 || m[0].GetLabel()[0].GetValue() != tc.runLabel || m[0].GetGauge().GetValue() != float64(start.Unix()) {
				t.Errorf("%s: run_start_timestamp_seconds = %v, want run=%q at %d", tc.name, m, tc.runLabel, start.Unix())
			}
		}
		if !byName["kubecost_s3_exporter_run_start_timestamp_seconds"] {
			t.Errorf("%s: no run_start_timestamp_seconds", tc.name)
		}
		if got := byName["kubecost_s3_exporter_last_archive_complete_timestamp_seconds"]; got != tc.complete {
			t.Errorf("%s: last_archive_complete_timestamp_seconds pushed %v, want %v", tc.name, got, tc.complete)
		}
	}
}

// Days that came back without idle are counted by the Requests observer
// (as the Kubecost client reports them) and pushed as a gauge.
func TestDaysWithoutIdle(t *testing.T) {
	reqs := &kubecost.Counter{}
	reqs.ObserveDayWithoutIdle()
	reqs.ObserveDayWithoutIdle()
	noIdle := reqs.DaysWithoutIdle()
	mfs, err := metrics.Registry(metrics.Run{Start: d(1), End: d(1), Requests: reqs.Counts(), DaysWithoutIdle: &noIdle}).Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := -1.0
	for _, mf := range mfs {
		if mf.GetName() == metrics.Namespace+"_last_run_days_without_idle" {
			got = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if got != 2 {
		t.Errorf("last_run_days_without_idle = %v, want 2", got)
	}
}
