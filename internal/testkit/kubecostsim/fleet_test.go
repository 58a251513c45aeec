package kubecostsim

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
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
	q := url.Values{"window": {windowParam(day, day.Add(24*time.Hour))}, "aggregate": {containerAgg}, "step": {"1d"}, "accumulate": {"false"}}
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
		{FlavorKubecost, false, []string{"filterClusters", "staging-eks,data"}, []string{"data-platform", "staging"}}, // EKS names
		{FlavorKubecost, false, []string{"filterClusters", "prod-eu-*"}, []string{"prod-eu-1"}},
		{FlavorKubecost, false, []string{"filterClusters", "prod"}, nil}, // no wildcard: exact match only
		{FlavorKubecost, true, []string{"filterClusters", "staging"}, []string{"data-platform", "prod-eu-1", "prod-us", "staging"}},
		{FlavorOpenCost, false, []string{"filter", `cluster:"prod-us", "staging"`}, []string{"prod-us", "staging"}},
		{FlavorOpenCost, true, []string{"filter", `cluster:"staging"`}, []string{"data-platform", "prod-eu-1", "prod-us", "staging"}},
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
		dq := fleetDayQuery(day, "filter", `cluster:"`+id+`"`, "step", "1h")
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

// rawSets queries srv and returns each set as raw JSON.
func rawSets(t *testing.T, srv *FleetServer, q url.Values) []string {
	t.Helper()
	resp, err := http.Get(srv.URL + "/model/allocation?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Data []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	out := make([]string, len(body.Data))
	for i, d := range body.Data {
		out[i] = string(d)
	}
	return out
}

// A member's gap day and the days past its retention have no rows of it:
// its truth is null, a query filtered to it answers null (or {}) sets, and
// the request log does not count it.
func TestFleetGapsRetentionAndTruth(t *testing.T) {
	t.Parallel()
	today := fleetNow.Truncate(24 * time.Hour)
	gap, old := today.AddDate(0, 0, -6), today.AddDate(0, 0, -16) // prod-us's gap; past staging's 14 days
	for _, empty := range []bool{false, true} {
		cfg := DemoFleet(func() time.Time { return fleetNow }, FlavorKubecost)
		cfg.EmptySets = empty
		srv := NewFleetServer(cfg)
		t.Cleanup(srv.Close)
		f := srv.Fleet
		if !slices.ContainsFunc(f.Members(), func(m Member) bool { return m.Config.ClusterName == "prod-us" && slices.Contains(m.MissingDays, gap) }) {
			t.Fatalf("the demo fleet's gap moved: %+v", f.Members())
		}
		for _, tc := range []struct {
			id       string
			day      time.Time
			wantNull bool
		}{{"prod-us", gap, true}, {"staging", old, true}, {"staging", gap, false}, {"data-platform", old, false}, {"prod-us", old, false}} {
			tr, err := f.Truth(tc.id, tc.day, 24*time.Hour, containerAgg)
			if err != nil || tr.Null != tc.wantNull || (tr.Count == 0) != tc.wantNull {
				t.Fatalf("Truth(%s, %s): %+v, %v; want null %v", tc.id, tc.day.Format(time.DateOnly), tr, err, tc.wantNull)
			}
			f.ResetRequests()
			q := fleetDayQuery(tc.day, "filter", `cluster:"`+tc.id+`"`, "idle", "false")
			_, sets := getFleet(t, srv, "/model/allocation", q)
			n, cost := 0, 0.0
			for _, s := range sets {
				for _, a := range s {
					n, cost = n+1, cost+a.TotalCost
				}
			}
			if n != tr.Count || math.Abs(cost-tr.TotalCost) > 1e-6*max(1, tr.TotalCost) {
				t.Errorf("%s %s: %d rows costing %f, truth %d costing %f", tc.id, tc.day.Format(time.DateOnly), n, cost, tr.Count, tr.TotalCost)
			}
			var want []string
			if !tc.wantNull {
				want = []string{tc.id}
			}
			if reqs := f.Requests(); len(reqs) != 1 || !slices.Equal(reqs[0].Clusters, want) {
				t.Errorf("%s %s: request log %+v, want clusters %v", tc.id, tc.day.Format(time.DateOnly), reqs, want)
			}
			if !tc.wantNull {
				continue
			}
			nullSet := map[bool]string{false: "null", true: "{}"}[empty]
			for _, s := range rawSets(t, srv, q) {
				if s != nullSet {
					t.Errorf("%s %s: set %.80s, want %s", tc.id, tc.day.Format(time.DateOnly), s, nullSet)
				}
			}
		}
		if _, err := f.Truth("nope", gap, time.Hour, containerAgg); err == nil {
			t.Error("Truth of an unknown member: no error")
		}
		// The gap day's availability row set holds the other members.
		f.ResetRequests()
		getFleet(t, srv, "/model/allocation", url.Values{"window": {windowParam(gap, gap.AddDate(0, 0, 1))}, "aggregate": {"cluster"}, "step": {"1d"}})
		if reqs := f.Requests(); len(reqs) != 1 || !slices.Equal(reqs[0].Clusters, []string{"data-platform", "prod-eu-1", "staging"}) {
			t.Errorf("gap day availability: request log %+v", reqs)
		}
	}
}

// An accumulated set holds each member's cost over its own retention.
func TestFleetAccumulated(t *testing.T) {
	t.Parallel()
	srv := NewFleetServer(DemoFleet(func() time.Time { return fleetNow }, FlavorKubecost))
	t.Cleanup(srv.Close)
	today := fleetNow.Truncate(24 * time.Hour)
	// Ends before prod-us's gap: a window touching a gap has no rows of
	// that member in the simulator.
	from, to := today.AddDate(0, 0, -40), today.AddDate(0, 0, -7)
	q := url.Values{"window": {windowParam(from, to)}, "aggregate": {"cluster"}, "accumulate": {"true"}, "idle": {"false"}}
	status, sets := getFleet(t, srv, "/model/allocation", q)
	if status != 200 || len(sets) != 1 || len(sets[0]) != len(srv.Fleet.Members()) {
		t.Fatalf("status %d, sets %+v; want one set with a row per member", status, sets)
	}
	for _, m := range srv.Fleet.Members() {
		want := 0.0
		for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
			tr, err := srv.Fleet.Truth(m.Config.ClusterName, d, 24*time.Hour, "cluster")
			if err != nil {
				t.Fatal(err)
			}
			want += tr.TotalCost
		}
		if got := sets[0][m.Config.ClusterName].TotalCost; want == 0 || math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s: accumulated cost %f, want its days' %f", m.Config.ClusterName, got, want)
		}
	}
}

// FailCluster fails the queries selecting that cluster alone, whichever
// filter form names it; SetFaults applies to every query.
func TestFleetFailClusterAndFaults(t *testing.T) {
	t.Parallel()
	srv := NewFleetServer(DemoFleet(func() time.Time { return fleetNow }, FlavorKubecost))
	t.Cleanup(srv.Close)
	day := fleetNow.Truncate(24*time.Hour).AddDate(0, 0, -3)
	srv.Fleet.FailCluster("staging", http.StatusBadGateway)
	for _, tc := range []struct {
		params []string
		want   int
	}{
		{[]string{"filterClusters", "staging-eks"}, http.StatusBadGateway}, // by EKS name
		{[]string{"filterClusters", "stag*"}, http.StatusBadGateway},
		{[]string{"filter", `cluster:"staging","prod-us"`}, http.StatusOK}, // not alone
		{[]string{"filter", `cluster:"data-platform"`}, http.StatusOK},
	} {
		if status, _ := getFleet(t, srv, "/model/allocation", fleetDayQuery(day, append(tc.params, "aggregate", "cluster")...)); status != tc.want {
			t.Errorf("%v: status %d, want %d", tc.params, status, tc.want)
		}
	}
	srv.Fleet.FailCluster("staging", 0)
	srv.Fleet.SetFaults(Faults{Mode: FaultStatus, Status: http.StatusServiceUnavailable, Times: 2})
	for i, want := range []int{503, 503, 200} {
		if status, _ := getFleet(t, srv, "/model/allocation", fleetDayQuery(day, "filter", `cluster:"prod-eu-1"`)); status != want {
			t.Errorf("request %d under a fault of 2 times: status %d, want %d", i+1, status, want)
		}
	}
}

// The demo fleet is what the exporter's federated tests rely on.
func TestDemoFleet(t *testing.T) {
	t.Parallel()
	f := NewFleet(DemoFleet(nil, FlavorOpenCost))
	arnRE := regexp.MustCompile(`^arn:aws:eks:([a-z0-9-]+):(\d{12}):cluster/([A-Za-z0-9_-]+)$`)
	accounts, regions, retentions := map[string]bool{}, map[string]bool{}, map[int]bool{}
	renamed, gaps := 0, 0
	var pairs []string
	for _, m := range f.Members() {
		p := arnRE.FindStringSubmatch(m.ARN())
		if p == nil || p[1] != m.Config.Region || p[2] != m.Account {
			t.Errorf("%s: ARN %q", m.Config.ClusterName, m.ARN())
			continue
		}
		accounts[p[2]], regions[p[1]], retentions[m.Config.RetentionDays] = true, true, true
		if p[3] != m.Config.ClusterName {
			renamed++
		}
		gaps += len(m.MissingDays)
		pairs = append(pairs, m.Config.ClusterName+"="+m.ARN())
	}
	n := len(f.Members())
	if n < 4 || len(accounts) != 2 || len(regions) != 2 || len(retentions) != n || renamed < 2 || gaps < 1 {
		t.Errorf("%d members, accounts %v, regions %v, retentions %v, %d renamed, %d gaps", n, accounts, regions, retentions, renamed, gaps)
	}
	if got := f.ClusterARNs(); got != strings.Join(pairs, ",") {
		t.Errorf("ClusterARNs %q", got)
	}
}
