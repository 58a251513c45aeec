package kubecostsim

import (
	"context"
	"math"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
)

// computeSink sums Kubecost's CPU, RAM and GPU cost (with adjustments) of
// the pods by namespace, and of the idle rows, as served.
type computeSink struct {
	pods map[string]float64
	idle float64
}

func (s *computeSink) beginSet(setWindow) error { return nil }
func (s *computeSink) endSet() error            { return nil }
func (s *computeSink) alloc(_ []byte, m *member, a *acc) error {
	c := a.cpuCost + a.cpuAdj + a.ramCost + a.ramAdj + a.gpuCost + a.gpuAdj
	if m.sl != nil {
		s.pods[m.sl.ctrl.ns.name] += c
	} else {
		s.idle += c
	}
	return nil
}

// TestCURLinesFollowKubecost: the simulated bill of a day is what cur.go
// says it is. At public on-demand prices its pod lines are Kubecost's
// compute of the same namespaces and hours, and its unused cost Kubecost's
// idle of the hours; the split and unused costs are 0.72 of those; every
// pod line names the cluster's ARN, and each node hour has its own line.
func TestCURLinesFollowKubecost(t *testing.T) {
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	sim := New(Config{Seed: 3, RetentionDays: 3, Now: func() time.Time { return now }})
	day := time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)
	const arn = "arn:aws:eks:us-east-1:444455556666:cluster/prod"

	podList, unusedList, split, unused := map[string]float64{}, 0.0, 0.0, 0.0
	var instance, other int
	err := sim.CURLines(context.Background(), CUROptions{ClusterARN: arn, From: day, To: day}, func(r *curfixture.Row) error {
		if r.Start.Before(day) || !r.Start.Before(day.AddDate(0, 0, 1)) {
			t.Fatalf("line of %s outside the day", r.Start)
		}
		switch r.Operation {
		case "EKSPod-EC2":
			rest, ok := strings.CutPrefix(r.ResourceID, "arn:aws:eks:us-east-1:444455556666:pod/prod/")
			parts := strings.Split(rest, "/")
			if !ok || len(parts) != 3 || r.ParentResourceID == "" || r.AccountID != "444455556666" {
				t.Fatalf("pod line %+v", r)
			}
			podList[parts[0]] += *r.PODSplit
			unusedList += *r.PODUnused
			split += *r.SplitCost
			unused += *r.UnusedCost
		case "RunInstances":
			instance++
		default:
			other++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := parseQuery(url.Values{"window": {day.Format(time.RFC3339) + "," + day.AddDate(0, 0, 1).Format(time.RFC3339)},
		"step": {"1h"}, "aggregate": {"namespace,pod"}, "idle": {"true"}, "splitIdle": {"true"}, "idleByNode": {"true"}}, FlavorKubecost)
	if err != nil {
		t.Fatal(err)
	}
	want := &computeSink{pods: map[string]float64{}}
	if err := sim.newEngine(q, want).run(context.Background(), sim.windows(q)); err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	var podTotal float64
	for ns, w := range want.pods {
		podTotal += w
		if !near(podList[ns], w) {
			t.Errorf("%s: bill at list price %.6f, Kubecost's compute %.6f", ns, podList[ns], w)
		}
	}
	if len(podList) != len(want.pods) {
		t.Errorf("bill namespaces %d, Kubecost's %d", len(podList), len(want.pods))
	}
	if !near(unusedList, want.idle) || want.idle <= 0 {
		t.Errorf("unused at list price %.6f, Kubecost's idle %.6f", unusedList, want.idle)
	}
	if !near(split, SavingsPlanRate*podTotal) || !near(unused, SavingsPlanRate*want.idle) {
		t.Errorf("split %.6f, unused %.6f; want 0.72 of %.6f and %.6f", split, unused, podTotal, want.idle)
	}
	if instance != 24*len(sim.c.nodes) || other != 0 {
		t.Errorf("%d instance lines for %d nodes, %d others", instance, len(sim.c.nodes), other)
	}
}
