package kubecostsim

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

var fleetNow = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

type fleetAlloc struct {
	Properties struct {
		Cluster, Namespace string
	}
	Window    struct{ Start time.Time }
	TotalCost float64
}

// getFleet queries srv and returns the status and the sets' allocations.
func getFleet(t *testing.T, srv *FleetServer, path string, q url.Values) (int, []map[string]fleetAlloc) {
	t.Helper()
	resp, err := http.Get(srv.URL + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Data []map[string]fleetAlloc }
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, body.Data
}

func clustersOf(sets []map[string]fleetAlloc) []string {
	var out []string
	for _, s := range sets {
		for _, a := range s {
			if !slices.Contains(out, a.Properties.Cluster) {
				out = append(out, a.Properties.Cluster)
			}
		}
	}
	slices.Sort(out)
	return out
}

func fleetDayQuery(day time.Time, extra ...string) url.Values {
	q := url.Values{"window": {windowParam(day, day.Add(24*time.Hour))}, "aggregate": {containerAgg}, "step": {"1h"}, "accumulate": {"false"}}
	for i := 0; i+1 < len(extra); i += 2 {
		q.Set(extra[i], extra[i+1])
	}
	return q
}

func TestFleetClusterFilter(t *testing.T) {
	t.Parallel()
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	for _, tc := range []struct {
		flavor Flavor
		ignore bool
		params []string
		want   []string
	}{
		{FlavorKubecost, false, []string{"filter", `cluster:"staging"`}, []string{"staging"}},
		{FlavorKubecost, false, []string{"filter", `cluster:"staging","prod-us"`}, []string{"prod-us", "staging"}},
		{FlavorKubecost, false, []string{"filterClusters", "staging"}, []string{"staging"}},
		{FlavorKubecost, false, []string{"filterClusters", "prod-eu"}, []string{"prod-eu-1"}}, // the EKS name matches too
		{FlavorKubecost, false, []string{"filterClusters", "prod*"}, []string{"prod-eu-1", "prod-us"}},
		{FlavorOpenCost, false, []string{"filter", `cluster:"data-platform"`}, []string{"data-platform"}},
		{FlavorOpenCost, false, []string{"filterClusters", "staging"}, []string{"data-platform", "prod-eu-1", "prod-us", "staging"}},
		{FlavorKubecost, true, []string{"filter", `cluster:"staging"`}, []string{"data-platform", "prod-eu-1", "prod-us", "staging"}},
		{FlavorKubecost, false, []string{"filter", `cluster:"nope"`}, nil},
	} {
		t.Run(fmt.Sprintf("%s-%v-%s", tc.flavor, tc.ignore, strings.Join(tc.params, "=")), func(t *testing.T) {
			t.Parallel()
			cfg := DemoFleet(func() time.Time { return fleetNow }, tc.flavor)
			cfg.IgnoreClusterFilter = tc.ignore
			srv := NewFleetServer(cfg)
			t.Cleanup(srv.Close)
			status, sets := getFleet(t, srv, tc.flavor.Paths()[0], fleetDayQuery(day, tc.params...))
			if got := clustersOf(sets); status != 200 || !slices.Equal(got, tc.want) {
				t.Errorf("status %d, clusters %v, want %v", status, got, tc.want)
			}
			reqs := srv.Fleet.Requests()
			if len(reqs) != 1 || !slices.Equal(reqs[0].Clusters, tc.want) {
				t.Errorf("request log %+v, want clusters %v", reqs, tc.want)
			}
		})
	}
}

// The availability query holds one row per cluster per day, following
// each member's retention and gaps, and each member's filtered day equals
// its own truth.
func TestFleetAvailabilityAndTruth(t *testing.T) {
	t.Parallel()
	cfg := DemoFleet(func() time.Time { return fleetNow }, FlavorKubecost)
	srv := NewFleetServer(cfg)
	t.Cleanup(srv.Close)
	today := fleetNow.Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -35)
	q := url.Values{"window": {windowParam(from, today)}, "aggregate": {"cluster"}, "step": {"1d"}, "accumulate": {"false"}}
	status, sets := getFleet(t, srv, "/model/allocation", q)
	if status != 200 || len(sets) != 35 {
		t.Fatalf("status %d, %d sets", status, len(sets))
	}
	got := map[string][]time.Time{}
	for _, s := range sets {
		for _, a := range s {
			// An idle row carries its cluster too: one day, several rows.
			if d := a.Window.Start.UTC(); !slices.Contains(got[a.Properties.Cluster], d) {
				got[a.Properties.Cluster] = append(got[a.Properties.Cluster], d)
			}
		}
	}
	if len(got) != len(srv.Fleet.Members()) {
		t.Errorf("rows of clusters %v, want exactly the members'", slices.Sorted(maps.Keys(got)))
	}
	gaps := 0
	for _, m := range srv.Fleet.Members() {
		id := m.Config.ClusterName
		want := srv.Fleet.AvailableDays(id)
		if len(want) != m.Config.RetentionDays-len(m.MissingDays) || !slices.Equal(got[id], want) {
			t.Errorf("%s: days %v, want %v", id, got[id], want)
		}
		gaps += len(m.MissingDays)
	}
	if gaps == 0 || len(srv.Fleet.Members()) < 4 {
		t.Fatalf("the demo fleet needs a gap and 4 members")
	}

	day := today.AddDate(0, 0, -2)
	for _, m := range srv.Fleet.Members() {
		id := m.Config.ClusterName
		dq := fleetDayQuery(day, "filter", `cluster:"`+id+`"`)
		_, sets := getFleet(t, srv, "/model/allocation", dq)
		dq.Del("filter")
		truth, err := srv.Fleet.TruthFor(id, dq)
		if err != nil {
			t.Fatal(err)
		}
		var n, wantN int
		var cost, wantCost float64
		for _, s := range sets {
			for _, a := range s {
				n++
				cost += a.TotalCost
			}
		}
		for _, tr := range truth {
			wantN += tr.Count
			wantCost += tr.TotalCost
		}
		if n == 0 || n != wantN || math.Abs(cost-wantCost) > 1e-6*wantCost {
			t.Errorf("%s: %d allocations costing %f, truth %d costing %f", id, n, cost, wantN, wantCost)
		}
	}
}

func TestFleetFailuresAndBadFilters(t *testing.T) {
	t.Parallel()
	srv := NewFleetServer(DemoFleet(func() time.Time { return fleetNow }, FlavorKubecost))
	t.Cleanup(srv.Close)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	srv.Fleet.FailCluster("staging", 503)
	if status, _ := getFleet(t, srv, "/model/allocation", fleetDayQuery(day, "filter", `cluster:"staging"`)); status != 503 {
		t.Errorf("failed cluster: status %d, want 503", status)
	}
	if status, _ := getFleet(t, srv, "/model/allocation", fleetDayQuery(day, "filter", `cluster:"prod-us"`)); status != 200 {
		t.Errorf("other cluster: status %d, want 200", status)
	}
	srv.Fleet.FailCluster("staging", 0)
	if status, _ := getFleet(t, srv, "/model/allocation", fleetDayQuery(day, "filter", `cluster:"staging"`)); status != 200 {
		t.Errorf("healed cluster: status %d, want 200", status)
	}
	for _, f := range []string{`namespace:"x"`, `cluster:staging`, `cluster:"a"+namespace:"b"`} {
		if status, _ := getFleet(t, srv, "/model/allocation", fleetDayQuery(day, "filter", f)); status != 400 {
			t.Errorf("filter %s: status %d, want 400", f, status)
		}
	}
	// Several clusters at namespace level would need merging: refused.
	q := fleetDayQuery(day)
	q.Set("aggregate", "namespace")
	if status, _ := getFleet(t, srv, "/model/allocation", q); status != 400 {
		t.Errorf("unfiltered namespace query: status %d, want 400", status)
	}
}
