package cli

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

func day(n int) time.Time { return time.Date(2026, 11, n, 0, 0, 0, 0, time.UTC) }

// exportDays plans the given days for export.
func exportDays(days ...time.Time) []exporter.DayPlan {
	var out []exporter.DayPlan
	for _, x := range days {
		out = append(out, exporter.DayPlan{Day: x, Reason: exporter.ReasonMissing, Export: true})
	}
	return out
}

// TestPlannedGatesTheHoleCount: through the command's conversion of a
// cluster's result (app.Planned decides), a cluster the run never planned pushes no
// archive_missing_days (its plan holds only the window, which would count
// zero days missing); one whose days failed does, and its success is 0.
func TestPlannedGatesTheHoleCount(t *testing.T) {
	window := exporter.Plan{First: day(1), Last: day(5)}
	planned := exporter.Plan{First: day(1), Last: day(5), Available: []time.Time{day(4), day(5)}, Present: []time.Time{day(4)},
		Days: exportDays(day(5))}
	unreachable := fmt.Errorf("ask Kubecost for available days: %w", errors.New("connection refused"))
	cases := []struct {
		name    string
		cluster app.ClusterResult
		err     error
		hole    bool
	}{
		{"ok", app.ClusterResult{Plan: planned, Days: []app.DayResult{{Day: day(5)}}}, nil, true},
		{"a day failed", app.ClusterResult{Plan: planned, Days: []app.DayResult{{Day: day(5), Err: errors.New("upload: 503")}}},
			fmt.Errorf("%w: 1", app.ErrDaysFailed), true},
		{"clean-up failed", app.ClusterResult{Plan: planned, Days: []app.DayResult{{Day: day(5)}}}, app.ErrCleanupFailed, true},
		{"Kubecost unreachable before planning", app.ClusterResult{Plan: window}, unreachable, false},
		{"listing denied", app.ClusterResult{Plan: window, PlanErr: errors.New("list: AccessDenied")}, errors.New("list: AccessDenied"), false},
		{"the run could not start", app.ClusterResult{}, errors.New("awsauth: no credentials"), false},
	}
	for _, tc := range cases {
		fams, err := metrics.Registry(metrics.Run{Start: day(6), End: day(6), Cluster: clusterMetrics(tc.cluster, tc.err), Err: tc.err}).Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			if m := f.GetMetric(); len(m) == 1 && m[0].GetGauge() != nil {
				got[f.GetName()] = m[0].GetGauge().GetValue()
			}
		}
		if _, ok := got["kubecost_s3_exporter_archive_missing_days"]; ok != tc.hole {
			t.Errorf("%s: archive_missing_days pushed %v, want %v", tc.name, ok, tc.hole)
		}
		if want := map[bool]float64{true: 0, false: 1}[tc.err != nil]; got["kubecost_s3_exporter_last_run_success"] != want {
			t.Errorf("%s: last_run_success = %v, want %v", tc.name, got["kubecost_s3_exporter_last_run_success"], want)
		}
	}
}
