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

func TestConfigErrorClusters(t *testing.T) {
	arn := func(name string) string { return "arn:aws:eks:us-east-1:111122223333:cluster/" + name }
	cases := []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"CLUSTER_ID": arn("prod")}, []string{"prod"}},
		{map[string]string{"CLUSTER_ARNS": "a=" + arn("prod-a") + ", b = " + arn("prod-b") + ",c=" + arn("prod-a")}, []string{"prod-a", "prod-b"}},
		{map[string]string{"CLUSTER_ID": "not-an-arn"}, []string{""}},
		{map[string]string{"CLUSTER_MAP_FILE": "/etc/map.yaml"}, []string{""}},
		{nil, []string{""}},
	}
	for _, tc := range cases {
		if got := metrics.ConfigErrorClusters(env(tc.env)); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ConfigErrorClusters(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestFleetOutcomes: which clusters of a federated run are pushed as
// failed, and which report a hole count.
func TestFleetOutcomes(t *testing.T) {
	window := exporter.Plan{First: d(1), Last: d(5)}
	planned := exporter.Plan{First: d(1), Last: d(5), Available: []time.Time{d(4), d(5)}, Present: []time.Time{d(4)},
		Days: exports(d(5))}
	arn := func(name string) string { return "arn:aws:eks:us-east-1:111122223333:cluster/" + name }
	ok := func(name string) app.ClusterResult {
		return app.ClusterResult{ID: name, ARN: arn(name), Summary: app.Summary{Plan: planned, Days: []app.DayResult{{Day: d(5)}}}}
	}
	dayFailed := func(name string) app.ClusterResult {
		c := ok(name)
		c.Days = []app.DayResult{{Day: d(5), Err: errors.New("upload: 503")}}
		return c
	}
	planFailed := func(name string) app.ClusterResult {
		return app.ClusterResult{ID: name, ARN: arn(name), Summary: app.Summary{Plan: window,
			Days: []app.DayResult{{Day: d(5), Err: errors.New("plan: list: AccessDenied")}}}, PlanErr: errors.New("list: AccessDenied")}
	}
	unreachable := fmt.Errorf("ask Kubecost for available days: %w", errors.New("connection refused"))
	names := []string{"a", "b"}
	cases := []struct {
		name        string
		sum         app.FleetSummary
		err         error
		failed      []bool
		holeCounted []bool // archive_missing_days pushed
	}{
		{"all ok", app.FleetSummary{Clusters: []app.ClusterResult{ok("a"), ok("b")}}, nil,
			[]bool{false, false}, []bool{true, true}},
		{"one cluster's day failed", app.FleetSummary{Clusters: []app.ClusterResult{ok("a"), dayFailed("b")}},
			fmt.Errorf("%w: 1 cluster-days", app.ErrDaysFailed), []bool{false, true}, []bool{true, true}},
		{"listing denied for one cluster", app.FleetSummary{Clusters: []app.ClusterResult{planFailed("a"), ok("b")}},
			fmt.Errorf("%w: 1 cluster-days", app.ErrDaysFailed), []bool{true, false}, []bool{false, true}},
		// The window is set before Kubecost is asked: it is not a plan.
		{"Kubecost unreachable before planning", app.FleetSummary{Clusters: []app.ClusterResult{
			{ID: "a", ARN: arn("a"), Summary: app.Summary{Plan: window}}, {ID: "b", ARN: arn("b"), Summary: app.Summary{Plan: window}}}},
			unreachable, []bool{true, true}, []bool{false, false}},
		{"the run could not be wired", app.FleetSummary{}, errors.New("awsauth: no credentials"),
			[]bool{true, true}, []bool{false, false}},
		{"unmapped clusters with FAIL_ON_UNMAPPED_CLUSTERS", app.FleetSummary{Clusters: []app.ClusterResult{ok("a"), ok("b")}, Unmapped: []string{"c"}},
			fmt.Errorf("%w: [c]", app.ErrUnmappedClusters), []bool{true, true}, []bool{true, true}},
	}
	for _, tc := range cases {
		got := metrics.FleetOutcomes(names, tc.sum, tc.err)
		if len(got) != len(names) {
			t.Fatalf("%s: %d outcomes for %d clusters", tc.name, len(got), len(names))
		}
		for i, o := range got {
			if o.Cluster != names[i] {
				t.Errorf("%s: outcome %d is for %q, want %q", tc.name, i, o.Cluster, names[i])
			}
			if (o.Err != nil) != tc.failed[i] {
				t.Errorf("%s: cluster %s err = %v, want failed %v", tc.name, o.Cluster, o.Err, tc.failed[i])
			}
			if _, counted := metrics.MissingDays(o.Summary.Plan, o.Summary.Days); counted != tc.holeCounted[i] {
				t.Errorf("%s: cluster %s reports a hole count: %v, want %v", tc.name, o.Cluster, counted, tc.holeCounted[i])
			}
		}
	}
}
