package metrics_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/app"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/metrics"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestRunID(t *testing.T) {
	start := time.Date(2026, 11, 3, 0, 0, 5, 0, time.UTC)
	if got := metrics.RunID(env(map[string]string{"RUN_ID": " kse-29372160 "}), start); got != "kse-29372160" {
		t.Errorf("RunID with RUN_ID set = %q", got)
	}
	for _, e := range []map[string]string{nil, {"RUN_ID": ""}} {
		if got := metrics.RunID(env(e), start); got != "2026-11-03T00:00:05Z" {
			t.Errorf("RunID without RUN_ID = %q, want the start time", got)
		}
	}
}

func TestParseURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"http://pushgateway.monitoring:9091": true, "https://ops:pw@push.example.com/prefix": true,
		"pushgateway:9091": false, "http://": false, "http://push?job=x": false, "": false,
	} {
		_, err := metrics.ParseURL(raw)
		if (err == nil) != ok {
			t.Errorf("ParseURL(%q) = %v, want ok %v", raw, err, ok)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("ParseURL error shows the password: %v", err)
		}
	}
}

// TestPlannedGatesTheHoleCount: a cluster the run never planned pushes no
// archive_missing_days (its plan holds only the window, which would count
// zero days missing); one whose days failed does, and its success is 0.
func TestPlannedGatesTheHoleCount(t *testing.T) {
	window := exporter.Plan{First: d(1), Last: d(5)}
	planned := exporter.Plan{First: d(1), Last: d(5), Available: []time.Time{d(4), d(5)}, Present: []time.Time{d(4)},
		Days: exports(d(5))}
	unreachable := fmt.Errorf("ask Kubecost for available days: %w", errors.New("connection refused"))
	cases := []struct {
		name    string
		cluster app.ClusterResult
		err     error
		hole    bool
	}{
		{"ok", app.ClusterResult{Plan: planned, Days: []app.DayResult{{Day: d(5)}}}, nil, true},
		{"a day failed", app.ClusterResult{Plan: planned, Days: []app.DayResult{{Day: d(5), Err: errors.New("upload: 503")}}},
			fmt.Errorf("%w: 1", app.ErrDaysFailed), true},
		{"clean-up failed", app.ClusterResult{Plan: planned, Days: []app.DayResult{{Day: d(5)}}}, app.ErrCleanupFailed, true},
		{"Kubecost unreachable before planning", app.ClusterResult{Plan: window}, unreachable, false},
		{"listing denied", app.ClusterResult{Plan: window, PlanErr: errors.New("list: AccessDenied")}, errors.New("list: AccessDenied"), false},
		{"the run could not start", app.ClusterResult{}, errors.New("awsauth: no credentials"), false},
	}
	for _, tc := range cases {
		fams, err := metrics.Registry(metrics.Run{Start: d(6), End: d(6), Cluster: tc.cluster, Err: tc.err}).Gather()
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
