package e2e_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pushgw"
)

// runLabels returns the run labels of the group's run_start series.
func runLabels(g map[string]*dto.MetricFamily) []string {
	var out []string
	for _, m := range g["kubecost_s3_exporter_run_start_timestamp_seconds"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "run" {
				out = append(out, lp.GetValue())
			}
		}
	}
	return out
}

// TestConfigErrorPushesFailure: a configuration error (exit 2) still
// pushes a failed run to the cluster's group when PUSHGATEWAY_URL itself
// is valid, and prints nothing beyond its one line; with an invalid
// PUSHGATEWAY_URL nothing is pushed.
func TestConfigErrorPushesFailure(t *testing.T) {
	gw := pushgw.Start(t)
	env := map[string]string{
		"CLUSTER_ID": clusterARN, "OUTPUT_DIR": t.TempDir(), "BACKFILL_PERIOD_DAYS": "1",
		"PUSHGATEWAY_URL": gw.URL, "RUN_ID": "kse-29372160",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var stderr bytes.Buffer
	before := time.Now()
	if code := cli.RunWith(context.Background(), lookup, &stderr, cli.Hooks{}); code != cli.ExitConfig {
		t.Fatalf("exit %d, want 2\n%s", code, stderr.String())
	}
	if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1; lines != 1 || !strings.Contains(stderr.String(), "BACKFILL_PERIOD_DAYS") {
		t.Errorf("stderr has %d lines, want the one configuration line:\n%s", lines, stderr.String())
	}
	g := gw.Group(group)
	if got := gauge(t, g, "last_run_success", nil); got != 0 {
		t.Errorf("last_run_success = %v after a configuration error", got)
	}
	if start := gauge(t, g, "last_run_start_timestamp_seconds", nil); start < float64(before.Unix()) {
		t.Errorf("last_run_start_timestamp_seconds = %v, before the run", start)
	}
	if got := runLabels(g); len(got) != 1 || got[0] != "kse-29372160" {
		t.Errorf("run labels %v, want [kse-29372160]", got)
	}
	for _, name := range []string{"last_success_timestamp_seconds", "archive_missing_days", "last_archive_complete_timestamp_seconds"} {
		if _, ok := g["kubecost_s3_exporter_"+name]; ok {
			t.Errorf("a configuration error pushed %s", name)
		}
	}

	// A CLUSTER_ID that is not an ARN names no group: the failure goes to
	// the job's group without a cluster label.
	env["CLUSTER_ID"] = "prod"
	if code := cli.RunWith(context.Background(), lookup, &stderr, cli.Hooks{}); code != cli.ExitConfig {
		t.Fatalf("exit %d, want 2", code)
	}
	if got := gauge(t, gw.Group(map[string]string{"job": "kubecost-s3-exporter", "cluster": ""}), "last_run_success", nil); got != 0 {
		t.Errorf("last_run_success = %v in the group without a cluster", got)
	}

	env["PUSHGATEWAY_URL"] = "pushgateway:9091"
	stderr.Reset()
	if code := cli.RunWith(context.Background(), lookup, &stderr, cli.Hooks{}); code != cli.ExitConfig {
		t.Fatalf("exit %d, want 2", code)
	}
	if n := len(gw.Pushes()); n != 2 {
		t.Errorf("%d pushes, want one for each run with a valid PUSHGATEWAY_URL (2)", n)
	}
}

// TestPodRetriesPushOneRun: three pod attempts of one Job (RUN_ID is the
// Job's name) leave one run series in the group, holding the last
// attempt's start; the next Job's run replaces it. The alerts count these
// series, so retries never count as runs (chart/alerts_test.go).
func TestPodRetriesPushOneRun(t *testing.T) {
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 5})
	gw := pushgw.Start(t)
	dir := t.TempDir()
	// A file where the month's directory goes: every day fails, exit 1.
	month := filepath.Join(dir, "account_id=111122223333", "region=us-east-1", "year=2026", "month=11")
	if err := os.MkdirAll(filepath.Dir(month), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(month, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var starts []float64
	for attempt := range 3 {
		code, logs := dirRun(t, sim, dir, gw, map[string]string{"RUN_ID": "kse-29372160"})
		if code != cli.ExitRuntime {
			t.Fatalf("attempt %d: exit %d, want 1\n%s", attempt, code, logs)
		}
		g := gw.Group(group)
		if got := runLabels(g); len(got) != 1 || got[0] != "kse-29372160" {
			t.Fatalf("after attempt %d: run labels %v, want one: kse-29372160", attempt, got)
		}
		starts = append(starts, gauge(t, g, "run_start_timestamp_seconds", map[string]string{"run": "kse-29372160"}))
		time.Sleep(10 * time.Millisecond)
	}
	if !(starts[0] < starts[1] && starts[1] < starts[2]) {
		t.Errorf("run start over the attempts %v: want each attempt's own start", starts)
	}
	if err := os.Remove(month); err != nil {
		t.Fatal(err)
	}
	if code, logs := dirRun(t, sim, dir, gw, map[string]string{"RUN_ID": "kse-29373600"}); code != cli.ExitOK {
		t.Fatalf("next run: exit %d\n%s", code, logs)
	}
	g := gw.Group(group)
	if got := runLabels(g); len(got) != 1 || got[0] != "kse-29373600" {
		t.Errorf("after the next Job: run labels %v, want only kse-29373600", got)
	}
	if gauge(t, g, "archive_missing_days", nil) != 0 {
		t.Error("the good run left a hole")
	}
	if c, s := gauge(t, g, "last_archive_complete_timestamp_seconds", nil), gauge(t, g, "last_success_timestamp_seconds", nil); c != s {
		t.Errorf("archive complete at %v, success at %v: want the same run's end", c, s)
	}
}
