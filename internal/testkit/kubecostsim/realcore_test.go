package kubecostsim

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// realCoreFleet is DemoFleet in RealCore mode whose "staging" has
// idleNodes nodes that run nothing.
func realCoreFleet(t *testing.T, flavor Flavor, idleNodes int) *FleetServer {
	t.Helper()
	cfg := DemoFleet(func() time.Time { return fleetNow }, flavor)
	cfg.RealCore = true
	cfg.Members[2].Config.IdleNodes = idleNodes
	srv := NewFleetServer(cfg)
	t.Cleanup(srv.Close)
	return srv
}

// idleRows returns the idle rows of the one set of sets by name.
func idleRows(t *testing.T, sets []map[string]fleetAlloc) map[string]fleetAlloc {
	t.Helper()
	if len(sets) != 1 {
		t.Fatalf("%d sets, want 1", len(sets))
	}
	out := map[string]fleetAlloc{}
	for name, a := range sets[0] {
		if strings.HasSuffix(name, "__idle__") {
			out[name] = a
		}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A response filtered to one cluster holds every other cluster's idle,
// one row per node: cost 0 for nodes that ran something, the full idle of
// nodes that ran nothing. The filtered cluster's rows are its truth.
func TestRealCoreFilteredIdle(t *testing.T) {
	t.Parallel()
	srv := realCoreFleet(t, FlavorKubecost, 1)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	q := fleetDayQuery(day, "idle", "true", "splitIdle", "true", "idleByNode", "true", "shareTenancyCosts", "true")
	for _, id := range []string{"prod-us", "staging"} {
		fq := url.Values{}
		for k, v := range q {
			fq[k] = v
		}
		fq.Set("filter", `cluster:"`+id+`"`)
		code, sets := getFleet(t, srv, "/model/allocation", fq)
		if code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		own, foreign, full := 0.0, 0, 0.0
		for name, a := range sets[0] {
			switch c := a.Properties.Cluster; {
			case c == id:
				own += a.TotalCost
			case strings.HasPrefix(name, c+"/") && strings.HasSuffix(name, "/__idle__"):
				foreign++
				full += a.TotalCost
			default:
				t.Fatalf("%s: a non-idle row of %q in the response for %q", name, c, id)
			}
		}
		truth, err := srv.Fleet.TruthFor(id, q)
		if err != nil || len(truth) != 1 || !near(own, truth[0].TotalCost) {
			t.Errorf("%s: own rows cost %.9f, truth %+v (%v)", id, own, truth, err)
		}
		// Every node of the other three clusters has a row; only
		// staging's empty node costs anything.
		nodes := 0
		for _, m := range srv.Fleet.members {
			if m.Config.ClusterName != id {
				nodes += len(m.sim.c.nodes)
			}
		}
		if foreign != nodes {
			t.Errorf("%s: %d idle rows of other clusters, want one per node (%d)", id, foreign, nodes)
		}
		if id == "staging" && full != 0 {
			t.Errorf("staging: other clusters' nodes all ran something, yet their idle costs %v", full)
		}
		if id == "prod-us" {
			// The empty node's full idle, as staging's own response has it.
			_, mine := getFleet(t, srv, "/model/allocation", withFilter(q, "staging"))
			want := 0.0
			for name, a := range idleRows(t, mine) {
				if strings.Contains(name, "ip-10-255-") {
					want = a.TotalCost
				}
			}
			if want <= 0 || !near(full, want) {
				t.Errorf("prod-us: other clusters' idle %.9f, want the empty node's full idle %.9f", full, want)
			}
		}
	}
}

func withFilter(q url.Values, id string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	out.Set("filter", `cluster:"`+id+`"`)
	return out
}

// Under aggregate=cluster, Kubecost's defaults (idle=true, no splitIdle)
// merge every cluster's idle into one "__idle__" of no cluster; with
// splitIdle each cluster has its "<cluster>/__idle__".
func TestRealCoreAvailabilityIdle(t *testing.T) {
	t.Parallel()
	srv := realCoreFleet(t, FlavorKubecost, 1)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	q := url.Values{"window": {windowParam(day, day.Add(24*time.Hour))}, "aggregate": {"cluster"}, "step": {"1d"}, "accumulate": {"false"}}
	_, sets := getFleet(t, srv, "/model/allocation", q)
	idle := idleRows(t, sets)
	merged, ok := idle["__idle__"]
	if len(idle) != 1 || !ok || merged.Properties.Cluster != "" || merged.TotalCost <= 0 {
		t.Fatalf("idle rows %+v, want one __idle__ of no cluster", idle)
	}
	q.Set("splitIdle", "true")
	_, sets = getFleet(t, srv, "/model/allocation", q)
	split := 0.0
	for _, m := range srv.Fleet.Members() {
		id := m.Config.ClusterName
		a, ok := sets[0][id+"/__idle__"]
		if !ok || a.Properties.Cluster != id || a.TotalCost <= 0 {
			t.Errorf("%s: idle row %+v", id, a)
		}
		split += a.TotalCost
		truth, err := srv.Fleet.TruthFor(id, q)
		if err != nil || !near(sets[0][id].TotalCost+a.TotalCost, truth[0].TotalCost) {
			t.Errorf("%s: cluster and idle %.9f, truth %+v (%v)", id, sets[0][id].TotalCost+a.TotalCost, truth, err)
		}
	}
	if !near(split, merged.TotalCost) {
		t.Errorf("split idle sums to %.9f, merged idle is %.9f", split, merged.TotalCost)
	}
}

// OpenCost has no splitIdle: a filtered response's idle, its own and the
// other clusters' rows, is one "__idle__" of no cluster. The other
// clusters' busy nodes add 0 to it; a node that ran nothing adds its full
// idle, which the exporter cannot tell apart.
func TestRealCoreOpenCostMergedIdle(t *testing.T) {
	t.Parallel()
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	q := fleetDayQuery(day, "includeIdle", "true", "idleByNode", "true", "filter", `cluster:"prod-us"`)
	for _, idleNodes := range []int{0, 1} {
		srv := realCoreFleet(t, FlavorOpenCost, idleNodes)
		_, sets := getFleet(t, srv, "/allocation/compute", q)
		idle := idleRows(t, sets)
		a, ok := idle["__idle__"]
		if len(idle) != 1 || !ok || a.Properties.Cluster != "" {
			t.Fatalf("idle rows %+v, want one __idle__ of no cluster", idle)
		}
		truth, err := srv.Fleet.TruthFor("prod-us", q)
		if err != nil {
			t.Fatal(err)
		}
		own := truth[0].ByNamespace[""]
		if idleNodes == 0 && !near(own, a.TotalCost) || idleNodes == 1 && a.TotalCost <= own*1.01 {
			t.Errorf("%d empty nodes in staging: merged idle %.9f, prod-us's own idle %.9f", idleNodes, a.TotalCost, own)
		}
	}
}

// Where Prometheus had NaN usage, the core's marshaller writes null.
func TestRealCoreNullNaN(t *testing.T) {
	t.Parallel()
	srv := realCoreFleet(t, FlavorKubecost, 1)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	resp, err := http.Get(srv.URL + "/model/allocation?" + withFilter(fleetDayQuery(day), "staging").Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []map[string]map[string]json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	nulls := 0
	for _, a := range body.Data[0] {
		if string(a["cpuEfficiency"]) == "null" {
			nulls++
			if string(a["cpuCoreUsageAverage"]) != "null" || string(a["totalEfficiency"]) != "null" || string(a["totalCost"]) == "null" {
				t.Errorf("usage %s efficiency %s total %s", a["cpuCoreUsageAverage"], a["totalEfficiency"], a["totalCost"])
			}
		}
	}
	if nulls == 0 {
		t.Error("no allocation with null usage")
	}
}

// SetIdleCostFactor changes one member's idle cost of one day, and
// nothing else: not its allocations, not its other days, not the others.
func TestFleetIdleCostFactor(t *testing.T) {
	t.Parallel()
	srv := realCoreFleet(t, FlavorKubecost, 1)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	q := func(d time.Time) url.Values {
		return fleetDayQuery(d, "idle", "true", "splitIdle", "true", "idleByNode", "true")
	}
	truth := func(id string, d time.Time) Truth {
		ts, err := srv.Fleet.TruthFor(id, q(d))
		if err != nil || len(ts) != 1 {
			t.Fatal(ts, err)
		}
		return ts[0]
	}
	before, other, otherDay := truth("staging", day), truth("prod-us", day), truth("staging", day.AddDate(0, 0, -1))
	srv.Fleet.SetIdleCostFactor("staging", day, 1.05)
	after := truth("staging", day)
	if !near(after.ByNamespace[""], 1.05*before.ByNamespace[""]) || before.ByNamespace[""] <= 0 {
		t.Errorf("idle %.9f -> %.9f, want x1.05", before.ByNamespace[""], after.ByNamespace[""])
	}
	if !near(after.TotalCost-after.ByNamespace[""], before.TotalCost-before.ByNamespace[""]) {
		t.Error("the allocations' cost changed")
	}
	if o, d := truth("prod-us", day), truth("staging", day.AddDate(0, 0, -1)); o.TotalCost != other.TotalCost || d.TotalCost != otherDay.TotalCost {
		t.Error("another member or another day changed")
	}
}
