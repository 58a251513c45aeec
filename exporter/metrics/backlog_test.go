package metrics_test

import (
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

// Before the window, only the days Kubecost offers and the archive lacks
// are missing: the days a budget left count, an old archive's gaps that
// Kubecost no longer holds do not.
func TestMissingDaysBacklog(t *testing.T) {
	// Window 20..25; Kubecost holds 10..25; days 1..3 stored long ago.
	avail := func(from, to int) []time.Time {
		var out []time.Time
		for x := from; x <= to; x++ {
			out = append(out, d(x))
		}
		return out
	}
	p := exporter.Plan{From: d(4), First: d(20), Last: d(25), Available: avail(10, 25), Present: []time.Time{d(1), d(2), d(3)}}
	var written []time.Time
	for x := 10; x <= 14; x++ {
		written = append(written, d(x))
	}
	// Written 10..14; 15..19 (backlog) and 20..25 (window) remain.
	if n, _ := metrics.MissingDays(p, written); n != 11 {
		t.Errorf("MissingDays = %d, want 11: 5 backlog days and 6 window days", n)
	}
	for x := 15; x <= 25; x++ {
		written = append(written, d(x))
	}
	if n, _ := metrics.MissingDays(p, written); n != 0 {
		t.Errorf("MissingDays = %d after every offered day was written, want 0: days 4..9 are gone from Kubecost", n)
	}
}

// A run stopped by its budget pushes the days it left and, when it shrank
// the backlog, the progress time the hole alert counts runs from.
func TestRegistryBacklog(t *testing.T) {
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	end := start.Add(50 * time.Minute)
	plan := exporter.Plan{First: d(5), Last: d(6), Available: []time.Time{d(1), d(2), d(3), d(4), d(5), d(6)}}
	c := metrics.Cluster{Plan: plan, Written: 2, Done: []time.Time{d(1), d(2)}, Planned: true, Remaining: 4}
	for _, progressed := range []bool{true, false} {
		fams, err := metrics.Registry(metrics.Run{Start: start, End: end, Cluster: c, Progressed: progressed}).Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			if m := f.GetMetric(); len(m) == 1 && m[0].GetGauge() != nil {
				got[f.GetName()] = m[0].GetGauge().GetValue()
			}
		}
		if got["kubecost_s3_exporter_last_run_days_remaining"] != 4 || got["kubecost_s3_exporter_archive_missing_days"] != 4 {
			t.Errorf("progressed=%v: days_remaining %v, archive_missing_days %v; want 4 and 4", progressed,
				got["kubecost_s3_exporter_last_run_days_remaining"], got["kubecost_s3_exporter_archive_missing_days"])
		}
		v, pushed := got["kubecost_s3_exporter_last_backlog_progress_timestamp_seconds"]
		if pushed != progressed || (pushed && v != float64(end.Unix())) {
			t.Errorf("progressed=%v: last_backlog_progress_timestamp_seconds = %v (pushed %v)", progressed, v, pushed)
		}
	}
}
