package e2e_test

import (
	"bytes"
	"context"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// TestOpenCostIdle runs the exporter with KUBECOST_API_FLAVOR=opencost
// against the simulator in OpenCost mode, which, like OpenCost's handler,
// ignores Kubecost's idle parameters. Every day's file must hold the idle
// row, and its totalCost must equal the server's total with idle included.
// The query CCA sends (idle=true&splitIdle=true...) is shown to lose the
// idle cost on this server, so the test would catch a regression.
func TestOpenCostIdle(t *testing.T) {
	sim := newSim(t, kubecostsim.Config{Seed: 11, RetentionDays: 6, Flavor: kubecostsim.FlavorOpenCost})
	out := t.TempDir()
	env := map[string]string{
		"CLUSTER_ID":            clusterARN,
		"KUBECOST_API_ENDPOINT": sim.URL,
		"KUBECOST_API_FLAVOR":   "opencost",
		"BACKFILL_PERIOD_DAYS":  "5",
		"OUTPUT_DIR":            out,
		"LOG_FORMAT":            "json",
	}
	var logs bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if code := cli.RunWith(context.Background(), lookup, &logs, cli.Hooks{Now: func() time.Time { return now }}); code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs.String())
	}
	if n := strings.Count(logs.String(), "API flavour limitation"); n != 1 {
		t.Errorf("the OpenCost limitation is logged %d times, want once per run\n%s", n, logs.String())
	}

	days := expectedDays(sim, 5)
	if len(days) == 0 {
		t.Fatal("no day to export")
	}
	proj := schema.NewProjection(clusterARN, "prod", nil, nil)
	for _, d := range days {
		key := prod.Key(d, exporter.Snappy)
		b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		f := pqcheck.Check(t, b, proj)
		names, err := f.Strings("name")
		if err != nil {
			t.Fatal(err)
		}
		costs, err := f.Doubles("totalCost")
		if err != nil {
			t.Fatal(err)
		}
		var total, idle float64
		for i, n := range names {
			total += costs[i]
			if n == "__idle__" {
				idle += costs[i]
			}
		}
		with := serverTotal(t, sim, d, "includeIdle", "true")
		cca := serverTotal(t, sim, d, "idle", "true", "splitIdle", "true", "idleByNode", "true", "shareTenancyCosts", "true")
		if math.Abs(total-with) > 1e-6*with {
			t.Errorf("%s: totalCost %.6f, server's total with idle %.6f", key, total, with)
		}
		if idle <= 0 || math.Abs(cca+idle-with) > 1e-6*with {
			t.Errorf("%s: idle %.6f; CCA's query gets %.6f of %.6f from OpenCost", key, idle, cca, with)
		}
		t.Logf("%s: idle is %.0f%% of the day's %.2f; CCA's query would have lost it", d.Format(time.DateOnly), 100*idle/with, with)
	}
}

// serverTotal is the day's totalCost as the OpenCost server computes it
// for a container-level query with the given extra parameters.
func serverTotal(t *testing.T, sim *kubecostsim.Server, d time.Time, extra ...string) float64 {
	t.Helper()
	v := url.Values{
		"window":    {d.Format(time.RFC3339) + "," + d.Add(24*time.Hour).Format(time.RFC3339)},
		"aggregate": {aggregate}, "step": {"1d"}, "accumulate": {"false"},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	sets, err := sim.Sim.TruthFor(v)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, s := range sets {
		sum += s.TotalCost
	}
	return sum
}
