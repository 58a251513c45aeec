package e2e_test

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/cli"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// The tests below run the federated export against a primary that treats
// idle as the core does (kubecostsim.FleetConfig.RealCore): a response
// filtered to one cluster also holds every other cluster's idle rows, and
// "data-platform" has a node that runs nothing, whose full idle cost is in
// every other cluster's responses.

// availQuery is the exporter's availability query of one day.
func availQuery(d time.Time) url.Values {
	return url.Values{"window": {d.Format(time.RFC3339) + "," + d.Add(24*time.Hour).Format(time.RFC3339)},
		"aggregate": {"cluster"}, "step": {"1d"}, "accumulate": {"false"}, "idle": {"true"}, "splitIdle": {"true"}}
}

// dayTotalOf is the kubecost-day-total metadata of key.
func (h *harness) dayTotalOf(t *testing.T, key string) float64 {
	t.Helper()
	head, err := h.s3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseFloat(head.Metadata[exporter.MetaDayTotal], 64)
	if err != nil {
		t.Fatalf("%s: metadata %v: %v", key, head.Metadata, err)
	}
	return v
}

// memberTotal is member id's truth for day d: its allocations and its own
// idle, as the availability query sees them.
func (h *harness) memberTotal(t *testing.T, id string, d time.Time) (total, idle float64) {
	t.Helper()
	tr, err := h.fleet.Fleet.TruthFor(id, availQuery(d))
	if err != nil || len(tr) != 1 {
		t.Fatal(tr, err)
	}
	// The cluster-day file's own idle is the "" namespace of the day query.
	day, err := h.fleet.Fleet.TruthFor(id, dayQuery(d))
	if err != nil || len(day) != 1 {
		t.Fatal(day, err)
	}
	return tr[0].TotalCost, day[0].ByNamespace[""]
}

func TestFederatedRealCoreMinIO(t *testing.T) {
	h := newCoreFleetHarness(t, kubecostsim.FlavorKubecost, nil)
	members := h.fleet.Fleet.Members()
	want := h.wantFleetKeys(20)
	n := 0
	for _, ds := range want {
		n += len(ds)
	}
	code, logs := h.run(map[string]string{"LOG_LEVEL": "debug", "FAIL_ON_UNMAPPED_CLUSTERS": "true"})
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	last := fleetSummary(t, logs, n, 0)
	if last["unmapped_clusters"] != nil && last["unmapped_clusters"] != float64(0) {
		t.Errorf("summary %v: no cluster is unmapped", last)
	}
	if got := len(h.objects()); got != n || n == 0 {
		t.Fatalf("%d objects, want every cluster-day (%d)", got, n)
	}
	for _, m := range members {
		id := m.Config.ClusterName
		for _, d := range want[id] {
			// Rows and per-namespace totals equal the member's truth:
			// its own idle in the "" namespace, other clusters' not.
			h.checkFleetFile(t, m, d)
			key := layoutOf(m).Key(d, exporter.Snappy)
			total, idle := h.memberTotal(t, id, d)
			// The stored total is rounded to a millionth (exporter.RoundTotal).
			if got := h.dayTotalOf(t, key); math.Abs(got-total) > 5e-7 || idle <= 0 {
				t.Errorf("%s: metadata day total %.9f, want the member's total with its idle (%.9f, idle %.9f)", key, got, total, idle)
			}
		}
	}
	// The responses did carry other clusters' idle, the empty node's full
	// idle among them, and each cluster-day said so once, at debug level.
	var drops, withCost int
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			Msg       string
			TotalCost float64 `json:"total_cost"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && strings.HasPrefix(l.Msg, "dropped the idle rows of other clusters") {
			drops++
			if l.TotalCost > 0 {
				withCost++
			}
		}
	}
	if drops != n || withCost == 0 {
		t.Errorf("%d debug lines about dropped idle (%d with a cost), want one per cluster-day (%d), some with a cost", drops, withCost, n)
	}
	if strings.Contains(logs, "no idle row") {
		t.Error("a cluster-day was reported without idle")
	}
}

// The same fleet from a primary that ignores the filter (an OpenCost
// before it read filter, a Kubecost before 1.96) answers every cluster's
// rows: every cluster-day fails, exit 1, nothing is written.
func TestFederatedRealCoreIgnoredFilter(t *testing.T) {
	for _, flavor := range []kubecostsim.Flavor{kubecostsim.FlavorKubecost, kubecostsim.FlavorOpenCost} {
		t.Run(string(flavor), func(t *testing.T) {
			h := newCoreFleetHarness(t, flavor, func(c *kubecostsim.FleetConfig) { c.IgnoreClusterFilter = true })
			h.env["KUBECOST_API_FLAVOR"] = string(flavor)
			code, logs := h.run(map[string]string{"BACKFILL_PERIOD_DAYS": "5"})
			if code != cli.ExitRuntime || !strings.Contains(logs, "ignored the cluster filter") {
				t.Fatalf("exit %d, want 1 with 'ignored the cluster filter'\n%s", code, logs)
			}
			if objs := h.objects(); len(objs) != 0 {
				t.Errorf("%d objects written from unfiltered responses: %v", len(objs), mapKeys(objs))
			}
			fleetSummary(t, logs, 0, len(h.fleet.Fleet.Members())*2)
		})
	}
}

// An OpenCost primary cannot split idle by cluster: its availability
// answer holds one "__idle__" of no cluster. That row is no cluster, so a
// fully mapped fleet passes FAIL_ON_UNMAPPED_CLUSTERS=true; a real cluster
// missing from the map still fails the run.
func TestFederatedMergedIdleNotUnmapped(t *testing.T) {
	h := newCoreFleetHarness(t, kubecostsim.FlavorOpenCost, nil)
	h.env["KUBECOST_API_FLAVOR"] = "opencost"
	h.env["FAIL_ON_UNMAPPED_CLUSTERS"] = "true"
	extra := map[string]string{"BACKFILL_PERIOD_DAYS": "5"}
	code, logs := h.run(extra)
	if code != cli.ExitOK || strings.Contains(logs, "the cluster map lacks") {
		t.Fatalf("fully mapped fleet: exit %d\n%s", code, logs)
	}
	// The availability answer did hold a merged idle row of no cluster.
	var avail url.Values
	for _, r := range h.fleet.Fleet.Requests() {
		if r.Query.Get("aggregate") == "cluster" && r.Query.Get("filter") == "" {
			avail = r.Query
		}
	}
	if avail.Get("includeIdle") != "true" {
		t.Fatalf("availability query %v does not ask for idle", avail)
	}
	resp, err := http.Get(h.fleet.URL + "/allocation/compute?" + avail.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data []map[string]struct{ Properties map[string]any }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	merged := 0
	for _, set := range body.Data {
		if a, ok := set["__idle__"]; ok && a.Properties["cluster"] == nil {
			merged++
		}
	}
	if merged == 0 {
		t.Fatal("the availability answer has no merged idle row: the test proves nothing")
	}

	// Unmap a real cluster: the run fails, naming it alone.
	members := h.fleet.Fleet.Members()
	var arns []string
	for _, m := range members[1:] {
		arns = append(arns, m.Config.ClusterName+"="+m.ARN())
	}
	h.env["CLUSTER_ARNS"] = strings.Join(arns, ",")
	code, logs = h.run(extra)
	if code != cli.ExitRuntime || strings.Count(logs, "the cluster map lacks") != 1 ||
		!strings.Contains(logs, `"kubecost_cluster":"`+members[0].Config.ClusterName+`"`) {
		t.Fatalf("one unmapped cluster: exit %d\n%s", code, logs)
	}
	if last := fleetSummary(t, logs, 0, 0); last["unmapped_clusters"] != float64(1) {
		t.Errorf("summary %v, want unmapped_clusters=1", last)
	}
}

// A 5 % change of one member's idle cost on one day is drift of that
// cluster-day alone: it is re-exported (reason drifted), nothing else is.
func TestFederatedIdleDrift(t *testing.T) {
	h := newCoreFleetHarness(t, kubecostsim.FlavorKubecost, nil)
	extra := map[string]string{"BACKFILL_PERIOD_DAYS": "6"}
	if code, logs := h.run(extra); code != cli.ExitOK {
		t.Fatalf("run 1 exit %d\n%s", code, logs)
	}
	before := h.objects()
	m := h.fleet.Fleet.Members()[2]
	id := m.Config.ClusterName
	want := h.wantFleetKeys(6)
	d := want[id][1]
	h.fleet.Fleet.SetIdleCostFactor(id, d, 1.05)

	code, logs := h.run(extra)
	if code != cli.ExitOK {
		t.Fatalf("run 2 exit %d\n%s", code, logs)
	}
	reasons := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l struct{ Msg, Day, Reason, Cluster string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "plan day" {
			reasons[l.Cluster+"/"+l.Day] = l.Reason
		}
	}
	wantReasons := map[string]string{}
	for c, ds := range want {
		for _, x := range ds {
			wantReasons[c+"/"+x.Format(time.DateOnly)] = "current"
		}
	}
	wantReasons[id+"/"+d.Format(time.DateOnly)] = "drifted"
	if !maps.Equal(reasons, wantReasons) {
		t.Errorf("plan reasons\n%v\nwant\n%v", reasons, wantReasons)
	}
	key := layoutOf(m).Key(d, exporter.Snappy)
	if got := changedKeys(before, h.objects()); !slices.Equal(got, []string{key}) {
		t.Fatalf("run 2 rewrote %v, want only %s", got, key)
	}
	h.checkFleetFile(t, m, d)
	total, _ := h.memberTotal(t, id, d)
	if got := h.dayTotalOf(t, key); math.Abs(got-total) > 5e-7 { // rounded to a millionth
		t.Errorf("%s: metadata day total %.9f, want %.9f", key, got, total)
	}
	fleetSummary(t, logs, 1, 0)
}
