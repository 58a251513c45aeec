package e2e_test

import (
	"strings"
	"testing"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// kubecost/kubecost#4508: a Kubecost 3.x sometimes answers a query with a
// previous query's aggregation. Here the first three container-level
// queries come back with the availability query's aggregate=cluster (one
// row per cluster and its idle, where a day has hundreds). Before this
// check, the exporter stored those days as 2-row files, logged "ok", and
// called them current ever after.
//
// Run 1 (one retry, one day at a time): the oldest day gets two stale
// answers and fails, naming the cause; the next day's retry is answered
// right and the day is written whole. Nothing of a stale answer reaches
// the bucket. Run 2, the quirk spent, writes the failed day, and every
// day holds exactly the rows and costs of a clean answer (the
// simulator's truth for the query asked).
func TestStaleAnswerNeverStored(t *testing.T) {
	h := newHarness(t)
	want := expectedDays(h.sim, 20)
	if len(want) < 3 {
		t.Fatalf("%d days to export, want at least 3", len(want))
	}
	h.sim.Sim.SetStaleAnswers(3)
	extra := map[string]string{"KUBECOST_MAX_RETRIES": "1", "CONCURRENCY": "1"}

	code, logs := h.run(extra)
	if code != cli.ExitRuntime {
		t.Fatalf("run 1 exit %d, want 1\n%s", code, logs)
	}
	for _, s := range []string{"answered another query than the one asked", "kubecost/kubecost#4508", "kubecost request failed, retrying"} {
		if !strings.Contains(logs, s) {
			t.Errorf("run 1 logs lack %q\n%s", s, logs)
		}
	}
	if n := h.sim.Sim.StaleAnswersLeft(); n != 0 {
		t.Fatalf("%d stale answers left: the test did not meet them", n)
	}
	objs := h.objects()
	if _, ok := objs[prod.Key(want[0], exporter.Snappy)]; ok {
		t.Errorf("%s was stored from stale answers", want[0].Format("2006-01-02"))
	}
	if len(objs) != len(want)-1 {
		t.Errorf("run 1 stored %d days, want %d (all but the oldest)", len(objs), len(want)-1)
	}
	assertSummary(t, logs, len(want), len(want)-1)
	proj := schema.NewProjection(clusterARN, "prod", []string{labelKey}, nil)
	for _, d := range want[1:] {
		checkFile(t, h, proj, d)
	}

	code, logs = h.run(extra)
	if code != cli.ExitOK {
		t.Fatalf("run 2 exit %d\n%s", code, logs)
	}
	assertSummary(t, logs, 1, 1)
	if n := len(h.objects()); n != len(want) {
		t.Errorf("%d days stored, want %d", n, len(want))
	}
	for _, d := range want {
		checkFile(t, h, proj, d)
	}
}

// The same against a federated primary, where the stale answer keeps the
// availability query's filter too (none): a cluster-day comes back as
// every cluster's total. It is told from a server that ignores the filter
// (rows of the shape asked, of other clusters), so the day fails alone
// and the run goes on; the next run completes the fleet, each
// cluster-day equal to its cluster's truth.
func TestStaleAnswerNeverStoredFederated(t *testing.T) {
	h := newFleetHarness(t, nil)
	h.fleet.Fleet.SetStaleAnswers(3)
	extra := map[string]string{"BACKFILL_PERIOD_DAYS": "5", "KUBECOST_MAX_RETRIES": "1", "CONCURRENCY": "1"}
	want := h.wantFleetKeys(5)
	n := 0
	for _, days := range want {
		n += len(days)
	}

	code, logs := h.run(extra)
	if code != cli.ExitRuntime || !strings.Contains(logs, "answered another query than the one asked") {
		t.Fatalf("run 1 exit %d, want 1 naming the stale answer\n%s", code, logs)
	}
	if strings.Contains(logs, "ignored the cluster filter") || strings.Contains(logs, "so the run stops") {
		t.Errorf("a stale answer was taken for an ignored filter\n%s", logs)
	}
	if left := h.fleet.Fleet.StaleAnswersLeft(); left != 0 {
		t.Fatalf("%d stale answers left: the test did not meet them", left)
	}
	fleetSummary(t, logs, n-1, 1)

	code, logs = h.run(extra)
	if code != cli.ExitOK {
		t.Fatalf("run 2 exit %d\n%s", code, logs)
	}
	fleetSummary(t, logs, 1, 0)
	if got := len(h.objects()); got != n {
		t.Errorf("%d objects, want %d", got, n)
	}
	for _, m := range h.fleet.Fleet.Members() {
		for _, d := range want[m.Config.ClusterName] {
			h.checkFleetFile(t, m, d)
		}
	}
}
