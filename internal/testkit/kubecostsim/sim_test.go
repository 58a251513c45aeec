package kubecostsim

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

const containerAgg = "cluster,node,namespace,pod,container"

// testNow is the simulated clock: Nov 20 2026, 10:30 UTC.
func testNow() time.Time { return time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC) }

func testConfig() Config {
	return Config{Seed: 7, Now: testNow, RetentionDays: 10}
}

func day(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }

func windowParam(a, b time.Time) string { return a.Format(time.RFC3339) + "," + b.Format(time.RFC3339) }

// qv builds a query without idle unless extra asks for it: Kubecost
// includes idle by default.
func qv(a, b time.Time, step, agg string, extra ...string) url.Values {
	v := url.Values{"window": {windowParam(a, b)}, "aggregate": {agg}, "accumulate": {"false"}, "idle": {"false"}}
	if step != "" {
		v.Set("step", step)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v
}

type rawResponse struct {
	Code   int                          `json:"code"`
	Status string                       `json:"status"`
	Data   []map[string]json.RawMessage `json:"data"`
}

func render(t testing.TB, s *Sim, v url.Values) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.WriteResponse(&buf, v); err != nil {
		t.Fatalf("WriteResponse(%v): %v", v, err)
	}
	return buf.Bytes()
}

func decodeRaw(t testing.TB, body []byte) rawResponse {
	t.Helper()
	var r rawResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("invalid JSON: %v\n%.500s", err, body)
	}
	if r.Code != 200 || r.Status != "success" {
		t.Fatalf("code %d status %q", r.Code, r.Status)
	}
	return r
}

// alloc is the subset of an allocation the tests look at.
type alloc struct {
	Name       string
	Properties struct {
		Cluster, Node, Container, Controller, ControllerKind, Namespace, Pod, ProviderID string
		Services                                                                         []string
		Labels, Annotations, NamespaceLabels                                             map[string]string
	}
	Window                                                                struct{ Start, End time.Time }
	Start, End                                                            time.Time
	Minutes                                                               float64
	CPUCost, CPUCostAdjustment, GPUCost, GPUCostAdjustment, RAMCost       float64
	RAMCostAdjustment, PVCost, PVCostAdjustment, NetworkCost              float64
	NetworkCostAdjustment, LoadBalancerCost, LoadBalancerCostAdjustment   float64
	SharedCost, ExternalCost, TotalCost                                   float64
	NetworkCrossZoneCost, NetworkCrossRegionCost, NetworkInternetCost     float64
	CPUCores, CPUCoreHours, RAMBytes, RAMByteHours, GPUHours, PVByteHours float64
	CPUEfficiency, RAMEfficiency, TotalEfficiency, CPUCoreRequestAverage  float64
}

func decodeSets(t testing.TB, body []byte) []map[string]alloc {
	t.Helper()
	var r struct{ Data []map[string]alloc }
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return r.Data
}

func relClose(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func TestDeterministicAcrossWindows(t *testing.T) {
	s := New(testConfig())
	d := day(17)
	alone := decodeRaw(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", containerAgg)))
	multi := decodeRaw(t, render(t, s, qv(day(15), day(19), "24h", containerAgg)))
	if len(alone.Data) != 1 || len(multi.Data) != 4 {
		t.Fatalf("sets: %d and %d", len(alone.Data), len(multi.Data))
	}
	sameSet(t, "day alone vs in 4 days", alone.Data[0], multi.Data[2])
	acc := decodeRaw(t, render(t, s, url.Values{"window": {windowParam(d, d.AddDate(0, 0, 1))}, "aggregate": {containerAgg}, "accumulate": {"true"}, "idle": {"false"}}))
	sameSet(t, "step 1d vs accumulate", alone.Data[0], acc.Data[0])

	hourly := decodeRaw(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1h", containerAgg)))
	if len(hourly.Data) != 24 {
		t.Fatalf("hourly sets: %d", len(hourly.Data))
	}
	var hourlyCost float64
	counts := map[int]bool{}
	for h := range 24 {
		from := d.Add(time.Duration(h) * time.Hour)
		one := decodeRaw(t, render(t, s, qv(from, from.Add(time.Hour), "60m", containerAgg)))
		sameSet(t, "hour "+from.Format(time.RFC3339), hourly.Data[h], one.Data[0])
		for _, a := range decodeSets(t, render(t, s, qv(from, from.Add(time.Hour), "1h", containerAgg)))[0] {
			hourlyCost += a.TotalCost
		}
		counts[len(one.Data[0])] = true
	}
	if len(counts) < 2 {
		t.Errorf("every hour has the same allocation count %v: no churn within the day", counts)
	}
	var dailyCost float64
	for _, a := range decodeSets(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", containerAgg)))[0] {
		dailyCost += a.TotalCost
	}
	if !relClose(dailyCost, hourlyCost) {
		t.Errorf("daily cost %v != sum of hourly %v", dailyCost, hourlyCost)
	}
	// A different seed must give a different cluster.
	other := testConfig()
	other.Seed++
	if bytes.Equal(render(t, New(other), qv(d, d.AddDate(0, 0, 1), "1d", containerAgg)), render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", containerAgg))) {
		t.Error("seed does not change the output")
	}
}

func sameSet(t *testing.T, what string, a, b map[string]json.RawMessage) {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%s: %d vs %d allocations", what, len(a), len(b))
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			t.Fatalf("%s: allocation %s differs:\n%s\n%s", what, k, v, b[k])
		}
	}
}

func TestRetentionAndAvailability(t *testing.T) {
	cfg := testConfig()
	cfg.RetentionDays = 5
	s := New(cfg)
	sets := decodeRaw(t, render(t, s, qv(day(12), day(22), "1d", "cluster"))).Data
	var avail []time.Time
	for i, set := range sets {
		d := day(12 + i)
		want := !d.Before(day(15)) && d.Before(day(20)) // Nov 20 is today: incomplete
		if (set != nil) != want {
			t.Errorf("%s: non-null %v, want %v", d.Format("Jan 2"), set != nil, want)
		}
		if set != nil {
			avail = append(avail, d)
		}
	}
	got := s.AvailableDays()
	if len(got) != 5 || !got[0].Equal(day(15)) || !got[4].Equal(day(19)) || len(avail) != 5 {
		t.Errorf("AvailableDays %v, non-null days %v", got, avail)
	}
	if tr, _ := s.Truth(day(14), 24*time.Hour, containerAgg); tr.Count != 0 || !tr.Null {
		t.Errorf("truth of an expired day: %+v", tr)
	}

	// Today's finished hours are there; the current hour is not.
	hours := decodeRaw(t, render(t, s, qv(day(20), day(21), "1h", "namespace"))).Data
	for h, set := range hours {
		if (set != nil) != (h < 10) {
			t.Errorf("today hour %d: non-null %v", h, set != nil)
		}
	}
	// A single accumulated set is clipped to the data that exists.
	acc := decodeSets(t, render(t, s, url.Values{"window": {windowParam(day(10), day(21))}, "aggregate": {"cluster"}, "accumulate": {"true"}}))
	if a := acc[0]["cluster-one"]; !a.Window.Start.Equal(day(15)) || !a.Window.End.Equal(testNow().Truncate(time.Hour)) {
		t.Errorf("accumulated window %v..%v", a.Window.Start, a.Window.End)
	}

	cfg.EmptySets, cfg.HourlyRetentionHours = true, 49
	s = New(cfg)
	body := render(t, s, qv(day(13), day(15), "1d", "cluster"))
	if !bytes.Contains(body, []byte(`"data":[{},{}]`)) {
		t.Errorf("EmptySets: %s", body)
	}
	hours = decodeRaw(t, render(t, s, qv(day(17), day(19), "1h", "cluster"))).Data
	for h, set := range hours {
		if want := day(17).Add(time.Duration(h) * time.Hour).After(testNow().Add(-50 * time.Hour)); (len(set) > 0) != want {
			t.Errorf("hourly retention, hour %d: %d allocations", h, len(set))
		}
	}
}

func TestAggregations(t *testing.T) {
	s := New(testConfig())
	cfg := s.Config()
	d := day(17)
	nNamespaces := cfg.Namespaces + 2 // kube-system, kubecost
	cases := []struct {
		agg       string
		want      int // 0: only compare with the truth
		noProps   []string
		nameParts int
	}{
		{"cluster", 1, []string{"node", "namespace", "pod", "labels"}, 1},
		{"", nNamespaces, []string{"node", "pod", "container", "labels"}, 1},
		{"namespace", nNamespaces, []string{"node", "pod", "container", "labels"}, 1},
		{"node", cfg.Nodes, []string{"namespace", "pod", "container"}, 1},
		{"controllerKind", 0, []string{"namespace", "pod", "controller"}, 1},
		{"controller", 0, []string{"pod", "container", "node"}, 1},
		{"namespace,controller", 0, []string{"pod", "container"}, 2},
		{"cluster,namespace,pod", 0, []string{"container"}, 3},
		{containerAgg, 0, nil, 5},
	}
	for _, c := range cases {
		body := render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", c.agg))
		raw := decodeRaw(t, body).Data[0]
		tr, err := s.Truth(d, 24*time.Hour, c.agg)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != tr.Count || (c.want > 0 && len(raw) != c.want) {
			t.Errorf("aggregate=%q: %d allocations, truth %d, want %d", c.agg, len(raw), tr.Count, c.want)
		}
		for name, v := range raw {
			var a struct {
				Name       string
				Properties map[string]json.RawMessage
			}
			json.Unmarshal(v, &a)
			if a.Name != name || strings.Count(name, "/")+1 != c.nameParts {
				t.Errorf("aggregate=%q: key %q name %q", c.agg, name, a.Name)
			}
			for _, p := range c.noProps {
				if _, ok := a.Properties[p]; ok {
					t.Errorf("aggregate=%q: %s has property %s", c.agg, name, p)
				}
			}
		}
	}
	// Container level: the name is the properties joined, and pods churn between days.
	sets := decodeSets(t, render(t, s, qv(day(14), day(19), "1d", containerAgg)))
	counts := map[int]bool{}
	kinds := map[string]int{}
	for _, set := range sets {
		counts[len(set)] = true
		for name, a := range set {
			p := a.Properties
			if want := strings.Join([]string{p.Cluster, p.Node, p.Namespace, p.Pod, p.Container}, "/"); name != want {
				t.Fatalf("name %q, properties say %q", name, want)
			}
			kinds[p.ControllerKind]++
		}
	}
	if len(counts) < 3 {
		t.Errorf("allocation counts per day %v: pods do not churn", counts)
	}
	for _, k := range []string{"deployment", "statefulset", "daemonset", "job", ""} {
		if kinds[k] == 0 {
			t.Errorf("no allocation with controllerKind %q: %v", k, kinds)
		}
	}
}

func TestLabelsAndProperties(t *testing.T) {
	if got := SanitizeLabelKey("app.kubernetes.io/name"); got != "app_kubernetes_io_name" {
		t.Errorf("SanitizeLabelKey: %q", got)
	}
	s := New(Config{Seed: 3, Now: testNow, Namespaces: 8, PodsPerNamespace: 20})
	sets := decodeSets(t, render(t, s, qv(day(18), day(19), "1d", containerAgg)))
	key := regexp.MustCompile(`^[a-zA-Z0-9_]+$`)
	seen := map[string]int{}
	var gpu, pv, lb float64
	for name, a := range sets[0] {
		p := a.Properties
		for k := range p.Labels {
			if !key.MatchString(k) {
				t.Fatalf("%s: unsanitized label key %q", name, k)
			}
			seen[k]++
		}
		for k := range p.Annotations {
			if !key.MatchString(k) {
				t.Fatalf("%s: unsanitized annotation key %q", name, k)
			}
		}
		for _, k := range []string{"node_kubernetes_io_instance_type", "topology_kubernetes_io_region",
			"topology_kubernetes_io_zone", "kubernetes_io_arch", "kubernetes_io_os"} {
			if p.Labels[k] == "" {
				t.Fatalf("%s: node label %s missing", name, k)
			}
		}
		eks := p.Labels["eks_amazonaws_com_capacityType"] != "" && p.Labels["eks_amazonaws_com_nodegroup"] != "" && p.Labels["eks_amazonaws_com_nodegroup_image"] != ""
		karp := p.Labels["karpenter_sh_capacity_type"] != "" && p.Labels["karpenter_sh_nodepool"] != "" && p.Labels["karpenter_k8s_aws_instance_ami_id"] != ""
		if eks == karp {
			t.Fatalf("%s: want exactly one of EKS and Karpenter node labels: %v", name, p.Labels)
		}
		if eks {
			seen["<eks>"]++
		} else {
			seen["<karpenter>"]++
		}
		if !strings.HasPrefix(p.ProviderID, "i-0") && !strings.HasPrefix(p.ProviderID, "aws:///") {
			t.Fatalf("%s: providerID %q", name, p.ProviderID)
		}
		if p.NamespaceLabels["kubernetes_io_metadata_name"] != p.Namespace {
			t.Fatalf("%s: namespaceLabels %v", name, p.NamespaceLabels)
		}
		if p.Labels["topology_kubernetes_io_region"] != "us-east-1" || !strings.HasPrefix(p.Labels["topology_kubernetes_io_zone"], "us-east-1") {
			t.Fatalf("%s: region labels %v", name, p.Labels)
		}
		gpu += a.GPUCost
		pv += a.PVCost
		lb += a.LoadBalancerCost
	}
	n := len(sets[0])
	for _, k := range []string{"app", "app_kubernetes_io_name", "team", "env", "<eks>", "<karpenter>"} {
		if seen[k] == 0 || (k[0] != '<' && seen[k] == n) {
			t.Errorf("label %s on %d of %d allocations: want some but not all", k, seen[k], n)
		}
	}
	if gpu <= 0 || pv <= 0 || lb <= 0 {
		t.Errorf("want GPU, PV and load balancer costs: %v %v %v", gpu, pv, lb)
	}
}

func TestIdle(t *testing.T) {
	s := New(testConfig())
	d := day(17)
	one := decodeSets(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", "namespace", "idle", "true")))[0]
	idle, ok := one["__idle__"]
	if !ok || idle.TotalCost <= 0 || idle.CPUCost < 0 || idle.RAMCost < 0 {
		t.Fatalf("__idle__ missing or not positive: %+v", idle)
	}
	byNode := decodeSets(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1h", containerAgg,
		"idle", "true", "splitIdle", "true", "idleByNode", "true")))
	for h, set := range byNode {
		var n int
		var cost float64
		for name, a := range set {
			if !strings.HasSuffix(name, "/__idle__") {
				continue
			}
			n++
			cost += a.TotalCost
			if name != "cluster-one/"+a.Properties.Node+"/__idle__" || a.TotalCost < 0 || a.Minutes != 60 {
				t.Fatalf("hour %d: idle %s: %+v", h, name, a)
			}
		}
		if n != s.Config().Nodes || cost <= 0 {
			t.Fatalf("hour %d: %d idle allocations costing %v, want one per node (%d)", h, n, cost, s.Config().Nodes)
		}
	}
	if tr, _ := s.TruthFor(qv(d, d.AddDate(0, 0, 1), "1d", "namespace", "idle", "true")); len(tr) != 1 || tr[0].Count != len(one) {
		t.Errorf("truth with idle: %+v, decoded %d", tr, len(one))
	}
}

func TestTruthMatchesJSON(t *testing.T) {
	s := New(Config{Seed: 11, Now: testNow, Namespaces: 5, PodsPerNamespace: 30})
	for _, step := range []time.Duration{time.Hour, 24 * time.Hour} {
		d := day(16)
		tr, err := s.Truth(d, step, containerAgg)
		if err != nil {
			t.Fatal(err)
		}
		sets := decodeSets(t, render(t, s, qv(d, d.AddDate(0, 0, 1), step.String(), containerAgg)))
		count, byNS := 0, map[string]float64{}
		for _, set := range sets {
			count += len(set)
			for name, a := range set {
				byNS[a.Properties.Namespace] += a.TotalCost
				parts := a.CPUCost + a.CPUCostAdjustment + a.GPUCost + a.GPUCostAdjustment + a.RAMCost +
					a.RAMCostAdjustment + a.PVCost + a.PVCostAdjustment + a.NetworkCost + a.NetworkCostAdjustment +
					a.LoadBalancerCost + a.LoadBalancerCostAdjustment + a.SharedCost + a.ExternalCost
				if !relClose(parts, a.TotalCost) || a.TotalCost <= 0 || a.CPUCost < 0 || a.RAMCost < 0 {
					t.Fatalf("%s: totalCost %v, parts %v", name, a.TotalCost, parts)
				}
				if !relClose(a.NetworkCost, a.NetworkCrossZoneCost+a.NetworkCrossRegionCost+a.NetworkInternetCost) {
					t.Fatalf("%s: network cost parts", name)
				}
				if !relClose(a.CPUCores*a.Minutes/60, a.CPUCoreHours) || !relClose(a.RAMBytes*a.Minutes/60, a.RAMByteHours) {
					t.Fatalf("%s: cores/hours inconsistent: %+v", name, a)
				}
				if a.Minutes != a.End.Sub(a.Start).Minutes() || a.Start.Before(a.Window.Start) || a.End.After(a.Window.End) {
					t.Fatalf("%s: times %v..%v in %v..%v, minutes %v", name, a.Start, a.End, a.Window.Start, a.Window.End, a.Minutes)
				}
			}
		}
		if count != tr.Count || len(byNS) != len(tr.ByNamespace) {
			t.Errorf("step %v: %d allocations in %d namespaces, truth %d in %d", step, count, len(byNS), tr.Count, len(tr.ByNamespace))
		}
		var total float64
		for ns, want := range tr.ByNamespace {
			total += byNS[ns]
			if !relClose(byNS[ns], want) {
				t.Errorf("step %v namespace %s: JSON %v, truth %v", step, ns, byNS[ns], want)
			}
		}
		if !relClose(total, tr.TotalCost) {
			t.Errorf("step %v: total %v, truth %v", step, total, tr.TotalCost)
		}
	}
	if _, err := s.Truth(day(16).Add(time.Hour), time.Hour, ""); err == nil {
		t.Error("Truth accepted a day that is not midnight")
	}
}

func TestQuirks(t *testing.T) {
	cfg := testConfig()
	cfg.Quirks = Quirks{NullNumbers: true, NegativeZero: true, OffsetTimes: true, NaNStrings: true, ExtraFields: true}
	s := New(cfg)
	d := day(17)
	body := render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", containerAgg))
	for _, want := range []string{`":null`, `":-0`, `"NaN"`, `"2026-11-16T19:00:00-05:00"`, `"x_futureField"`, `"x_unknownProperty"`, `"meta"`} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("quirky body lacks %s", want)
		}
	}
	// A tolerant client (null, -0 and "NaN" read as 0) still gets the truth.
	var r struct {
		Data []map[string]struct {
			Properties struct{ Namespace string }
			Window     struct{ Start time.Time }
			TotalCost  float64
			CPUCost    *float64
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	tr, _ := s.Truth(d, 24*time.Hour, containerAgg)
	byNS := map[string]float64{}
	for _, a := range r.Data[0] {
		byNS[a.Properties.Namespace] += a.TotalCost
		if !a.Window.Start.Equal(d) {
			t.Fatalf("window start %v is not the same instant as %v", a.Window.Start, d)
		}
	}
	for ns, want := range tr.ByNamespace {
		if !relClose(byNS[ns], want) {
			t.Errorf("namespace %s: %v, truth %v", ns, byNS[ns], want)
		}
	}
}

func TestBadParams(t *testing.T) {
	s := New(testConfig())
	good := windowParam(day(17), day(18))
	for _, v := range []url.Values{
		{},
		{"window": {"yesterday"}},
		{"window": {"2026-11-18T00:00:00Z,2026-11-17T00:00:00Z"}},
		{"window": {"2026-11-17T00:30:00Z,2026-11-18T00:00:00Z"}},
		{"window": {good}, "aggregate": {"label:app"}},
		{"window": {good}, "step": {"5m"}},
		{"window": {good}, "step": {"banana"}},
		{"window": {good}, "idle": {"maybe"}},
		{"window": {good}, "accumulate": {"week"}},
	} {
		err := s.WriteResponse(&bytes.Buffer{}, v)
		if _, ok := err.(*ParamError); !ok {
			t.Errorf("%v: error %v, want *ParamError", v, err)
		}
	}
	unix := url.Values{"window": {"1794873600,1794960000"}, "step": {"1d"}, "aggregate": {"cluster"}}
	if sets := decodeRaw(t, render(t, s, unix)).Data; len(sets) != 1 || sets[0] == nil {
		t.Errorf("unix window: %v", sets)
	}
}

// TestDayCostFactor changes one day's costs by 1 %: the availability query
// (aggregate=cluster, step=1d), the day's container query with idle, and
// the truth all move by exactly that factor, and no other day moves.
func TestDayCostFactor(t *testing.T) {
	s := New(testConfig())
	totals := func() map[time.Time]float64 {
		out := map[time.Time]float64{}
		for _, set := range decodeSets(t, render(t, s, qv(day(14), day(19), "1d", "cluster"))) {
			for _, a := range set {
				out[a.Window.Start.UTC()] += a.TotalCost
			}
		}
		return out
	}
	dayQuery := func(d time.Time) (n int, total float64) {
		for _, set := range decodeSets(t, render(t, s, qv(d, d.AddDate(0, 0, 1), "1d", containerAgg, "idle", "true", "splitIdle", "true", "idleByNode", "true"))) {
			for _, a := range set {
				n++
				total += a.TotalCost
			}
		}
		return n, total
	}
	truth := func(d time.Time) float64 {
		tr, err := s.Truth(d, 24*time.Hour, "cluster")
		if err != nil {
			t.Fatal(err)
		}
		return tr.TotalCost
	}
	before := totals()
	n0, day0 := dayQuery(day(16))
	truth0 := truth(day(16))
	if len(before) != 5 || !relClose(before[day(16)], truth0) {
		t.Fatalf("totals %v, truth of the 16th %v", before, truth0)
	}

	s.SetDayCostFactor(day(16).Add(5*time.Hour), 1.01)
	after := totals()
	for d, was := range before {
		want := was
		if d.Equal(day(16)) {
			want = was * 1.01
		}
		if !relClose(after[d], want) && math.Abs(after[d]-want) > 1e-6 {
			t.Errorf("%s: total %v, was %v, want %v", d.Format(time.DateOnly), after[d], was, want)
		}
	}
	if n1, day1 := dayQuery(day(16)); n1 != n0 || math.Abs(day1/day0-1.01) > 1e-9 {
		t.Errorf("day query: %d allocations costing %v, before %d costing %v: want the same rows at 1.01×", n1, day1, n0, day0)
	}
	if got := truth(day(16)); math.Abs(got/truth0-1.01) > 1e-9 || !relClose(got, after[day(16)]) {
		t.Errorf("truth %v, was %v, JSON now %v", got, truth0, after[day(16)])
	}

	s.SetDayCostFactor(day(16), 1)
	if got := totals()[day(16)]; !relClose(got, before[day(16)]) {
		t.Errorf("factor 1 did not undo: %v, want %v", got, before[day(16)])
	}
}
