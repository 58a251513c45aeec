package e2e_test

import (
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

// OpenCost 1.119 dropped properties.providerID from every allocation
// (opencost/opencost#3538). A day without it is exported whole: the
// column is "" (the contract's value for a missing string), provider,
// which is derived from it, is "" too, and every other property and cost
// is as before. With providerID, the columns carry it.
func TestOpenCostProviderID(t *testing.T) {
	for _, withID := range []bool{true, false} {
		name := map[bool]string{true: "with providerID (1.118 and older)", false: "without providerID (1.119+)"}[withID]
		t.Run(name, func(t *testing.T) {
			cfg := kubecostsim.Config{Seed: 11, RetentionDays: 6, Flavor: kubecostsim.FlavorOpenCost}
			cfg.Quirks.NoProviderID = !withID
			sim := newSim(t, cfg)
			out := t.TempDir()
			code, logs := runEnv(map[string]string{
				"CLUSTER_ID": clusterARN, "KUBECOST_API_ENDPOINT": sim.URL, "KUBECOST_API_FLAVOR": "opencost",
				"BACKFILL_PERIOD_DAYS": "5", "OUTPUT_DIR": out, "LOG_FORMAT": "json",
			}, nil)
			if code != cli.ExitOK {
				t.Fatalf("exit %d\n%s", code, logs)
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
				if want := openCostTruth(t, sim, d); f.NumRows != int64(want) {
					t.Errorf("%s: %d rows, the server has %d", key, f.NumRows, want)
				}
				col := func(c string) []string {
					v, err := f.Strings(c)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				names, ids, providers, nodes := col("name"), col("properties.providerID"), col("properties.provider"), col("properties.node")
				var withIDs, aws int
				for i := range names {
					if names[i] == "__idle__" {
						continue
					}
					if nodes[i] == "" {
						t.Errorf("%s: row %q lost its node", key, names[i])
					}
					if ids[i] != "" {
						withIDs++
					}
					if providers[i] == "AWS" {
						aws++
					}
				}
				if withID && (withIDs == 0 || aws != withIDs) {
					t.Errorf("%s: %d rows with a providerID, %d of provider AWS, want all of them", key, withIDs, aws)
				}
				if !withID && (withIDs != 0 || aws != 0) {
					t.Errorf("%s: %d rows with a providerID and %d of provider AWS from a server that sends none", key, withIDs, aws)
				}
			}
		})
	}
}

// openCostTruth is the number of allocations OpenCost answers the day
// query with.
func openCostTruth(t *testing.T, sim *kubecostsim.Server, d time.Time) int {
	t.Helper()
	sets, err := sim.Sim.TruthFor(url.Values{
		"window":    {d.Format(time.RFC3339) + "," + d.Add(24*time.Hour).Format(time.RFC3339)},
		"aggregate": {aggregate}, "step": {"1d"}, "accumulate": {"false"}, "includeIdle": {"true"}, "idleByNode": {"true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range sets {
		n += s.Count
	}
	return n
}

// A federated export from OpenCost needs an OpenCost that reads filter on
// /allocation/compute (1.115, the first release after
// opencost/opencost#3155). One that does: every cluster-day is written.
// One that does not answers every cluster: the first cluster-day fails
// after its retry with an error naming OpenCost and the version it takes,
// the run stops there instead of asking for every other cluster-day, and
// nothing is written.
func TestOpenCostClusterFilter(t *testing.T) {
	t.Run("reads filter", func(t *testing.T) {
		h := newCoreFleetHarness(t, kubecostsim.FlavorOpenCost, nil)
		h.env["KUBECOST_API_FLAVOR"] = "opencost"
		code, logs := h.run(map[string]string{"BACKFILL_PERIOD_DAYS": "5"})
		if code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", code, logs)
		}
		n := 0
		for _, days := range h.wantFleetKeys(5) {
			n += len(days)
		}
		if got := len(h.objects()); n == 0 || got != n {
			t.Errorf("%d objects, want %d", got, n)
		}
	})
	t.Run("ignores filter", func(t *testing.T) {
		h := newCoreFleetHarness(t, kubecostsim.FlavorOpenCost, func(c *kubecostsim.FleetConfig) { c.IgnoreClusterFilter = true })
		h.env["KUBECOST_API_FLAVOR"] = "opencost"
		code, logs := h.run(map[string]string{"BACKFILL_PERIOD_DAYS": "5"})
		if code != cli.ExitRuntime {
			t.Fatalf("exit %d, want 1\n%s", code, logs)
		}
		for _, s := range []string{"OpenCost ignored the cluster filter", "from 1.115", "opencost/opencost#3155", "so the run stops"} {
			if !strings.Contains(logs, s) {
				t.Errorf("logs lack %q\n%s", s, logs)
			}
		}
		for _, s := range []string{"retried by the next run", "kubecost ignored", "Kubecost ignored"} {
			if strings.Contains(logs, s) {
				t.Errorf("logs say %q\n%s", s, logs)
			}
		}
		if objs := h.objects(); len(objs) != 0 {
			t.Errorf("%d objects written from unfiltered responses: %v", len(objs), mapKeys(objs))
		}
		planned := len(h.fleet.Fleet.Members()) * 2
		fleetSummary(t, logs, 0, planned)
		// CONCURRENCY=3, KUBECOST_MAX_RETRIES=1: at most 3 cluster-days
		// were in flight, each asked at most twice, of the 8 planned.
		dayQueries := 0
		for _, r := range h.fleet.Fleet.Requests() {
			if r.Query.Get("filter") != "" {
				dayQueries++
			}
		}
		if dayQueries == 0 || dayQueries > 6 {
			t.Errorf("%d cluster-day queries, want 1 to 6: the run goes on after the server proved it ignores the filter", dayQueries)
		}
	})
}
