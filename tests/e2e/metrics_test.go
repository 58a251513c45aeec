package e2e_test

import (
	"maps"
	"net/http"
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

// dirRun runs the exporter into an OUTPUT_DIR against sim, pushing to gw.
func dirRun(t *testing.T, sim *kubecostsim.Server, dir string, gw *pushgw.Server, extra map[string]string) (int, string) {
	t.Helper()
	env := map[string]string{
		"OUTPUT_DIR":            dir,
		"CLUSTER_ID":            clusterARN,
		"KUBECOST_API_ENDPOINT": sim.URL,
		"BACKFILL_PERIOD_DAYS":  "20",
		"KUBECOST_MAX_RETRIES":  "1",
		"LOG_FORMAT":            "json",
		"PUSHGATEWAY_URL":       gw.URL,
	}
	maps.Copy(env, extra)
	return runEnv(env, nil)
}

var group = map[string]string{"job": "kubecost-s3-exporter", "cluster": "prod"}

func gauge(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := pushgw.Value(fams, "kubecost_s3_exporter_"+name, labels)
	if !ok {
		t.Fatalf("metric kubecost_s3_exporter_%s%v not pushed", name, labels)
	}
	return v
}

// TestRunPushesMetrics runs the exporter three times against the simulator
// and checks what the Pushgateway holds after each: a run whose every day
// fails (the month's directory is blocked by a file), a run that recovers
// after one retried Kubecost request, and a run with nothing to do.
func TestRunPushesMetrics(t *testing.T) {
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15})
	gw := pushgw.Start(t)
	dir := t.TempDir()
	month := filepath.Join(dir, "account_id=111122223333", "region=us-east-1", "year=2026", "month=11")
	if err := os.MkdirAll(filepath.Dir(month), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(month, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	before := time.Now()
	code, logs := dirRun(t, sim, dir, gw, nil)
	if code != cli.ExitRuntime {
		t.Fatalf("blocked run: exit %d, want 1\n%s", code, logs)
	}
	g := gw.Group(group)
	planned := gauge(t, g, "last_run_days_planned", nil)
	if planned < 10 {
		t.Fatalf("days planned = %v, want the simulator's retained days (>= 10)", planned)
	}
	for name, want := range map[string]float64{
		"last_run_success": 0, "last_run_days_written": 0, "last_run_days_failed": planned,
		"archive_missing_days": planned, "last_run_rows_written": 0,
	} {
		if got := gauge(t, g, name, nil); got != want {
			t.Errorf("after the failed run %s = %v, want %v", name, got, want)
		}
	}
	if _, ok := g["kubecost_s3_exporter_last_success_timestamp_seconds"]; ok {
		t.Error("a failed run pushed last_success_timestamp_seconds")
	}
	if ok := gauge(t, g, "last_run_kubecost_requests", map[string]string{"outcome": "ok"}); ok != planned+1 {
		t.Errorf("ok requests = %v, want one per day plus the availability query (%v)", ok, planned+1)
	}
	start := gauge(t, g, "last_run_start_timestamp_seconds", nil)
	end := gauge(t, g, "last_run_end_timestamp_seconds", nil)
	if start < float64(before.Unix()) || end < start || end > float64(time.Now().Unix()+1) {
		t.Errorf("start %v end %v: not within the run", start, end)
	}

	if err := os.Remove(month); err != nil {
		t.Fatal(err)
	}
	sim.Sim.FailNext(1, http.StatusServiceUnavailable)
	code, logs = dirRun(t, sim, dir, gw, nil)
	if code != cli.ExitOK {
		t.Fatalf("second run: exit %d\n%s", code, logs)
	}
	g = gw.Group(group)
	for name, want := range map[string]float64{
		"last_run_success": 1, "last_run_days_written": planned, "last_run_days_failed": 0, "archive_missing_days": 0,
	} {
		if got := gauge(t, g, name, nil); got != want {
			t.Errorf("after the good run %s = %v, want %v", name, got, want)
		}
	}
	for outcome, want := range map[string]float64{"ok": planned + 1, "retried": 1, "split": 0, "failed": 0} {
		if got := gauge(t, g, "last_run_kubecost_requests", map[string]string{"outcome": outcome}); got != want {
			t.Errorf("requests{outcome=%s} = %v, want %v", outcome, got, want)
		}
	}
	if rows := gauge(t, g, "last_run_rows_written", nil); rows < planned*10 {
		t.Errorf("rows written = %v", rows)
	}
	if b := gauge(t, g, "last_run_bytes_written", nil); b <= 0 {
		t.Errorf("bytes written = %v", b)
	}
	success := gauge(t, g, "last_success_timestamp_seconds", nil)
	if success < gauge(t, g, "last_run_start_timestamp_seconds", nil) {
		t.Errorf("last success %v is before the run's start", success)
	}

	// A run that fails before planning keeps the last success and the last
	// known hole count: the Pushgateway merges pushes by metric name.
	code, _ = dirRun(t, sim, dir, gw, map[string]string{"KUBECOST_API_ENDPOINT": "http://" + closedAddr(t)})
	if code != cli.ExitRuntime {
		t.Fatalf("run against a dead Kubecost: exit %d", code)
	}
	g = gw.Group(group)
	if got := gauge(t, g, "last_success_timestamp_seconds", nil); got != success {
		t.Errorf("a failed run changed last_success_timestamp_seconds from %v to %v", success, got)
	}
	if got := gauge(t, g, "last_run_success", nil); got != 0 {
		t.Errorf("last_run_success = %v after a failed run", got)
	}
	if got := gauge(t, g, "last_run_kubecost_requests", map[string]string{"outcome": "failed"}); got != 1 {
		t.Errorf("failed requests = %v, want 1", got)
	}
	for _, p := range gw.Pushes() {
		if p.Method != http.MethodPost {
			t.Errorf("push used %s; POST keeps the metrics a failed run does not send", p.Method)
		}
	}
	if n := len(gw.Pushes()); n != 3 {
		t.Errorf("%d pushes for 3 runs", n)
	}
}

// TestDryRunReportsHoles: a dry run writes nothing, so every planned day is
// still missing from the archive.
func TestDryRunReportsHoles(t *testing.T) {
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 15})
	gw := pushgw.Start(t)
	if code, logs := dirRun(t, sim, t.TempDir(), gw, map[string]string{"DRY_RUN": "true"}); code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	g := gw.Group(group)
	planned := gauge(t, g, "last_run_days_planned", nil)
	if missing := gauge(t, g, "archive_missing_days", nil); planned == 0 || missing != planned {
		t.Errorf("dry run: planned %v, missing %v; want equal and > 0", planned, missing)
	}
}

// TestPushFailureDoesNotFailTheRun: a Pushgateway answering 500 costs one
// warning, never the exit status, and the password in its URL is not logged.
func TestPushFailureDoesNotFailTheRun(t *testing.T) {
	sim := newSim(t, kubecostsim.Config{Seed: 7, RetentionDays: 5})
	gw := pushgw.Start(t)
	gw.FailWith(http.StatusInternalServerError)
	u := strings.Replace(gw.URL, "http://", "http://ops:s3cret@", 1)
	code, logs := dirRun(t, sim, t.TempDir(), gw, map[string]string{"PUSHGATEWAY_URL": u})
	if code != cli.ExitOK {
		t.Fatalf("exit %d after a failed push\n%s", code, logs)
	}
	if n := strings.Count(logs, "could not push metrics"); n != 1 {
		t.Errorf("%d log lines about the failed push, want 1\n%s", n, logs)
	}
	if strings.Contains(logs, "s3cret") {
		t.Errorf("the Pushgateway password was logged\n%s", logs)
	}
	if len(gw.Pushes()) != 0 {
		t.Error("the failing gateway accepted a push")
	}
}
