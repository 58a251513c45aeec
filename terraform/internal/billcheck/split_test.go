//go:build cgo

package billcheck_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curcheck"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/splittest"
)

// stepCols are the waterfall's columns of the namespace and cluster views.
var stepCols = []string{"kubecost_cost", "pricing_step", "discounts_step", "negotiated_step", "split_bill_cost",
	"idle_spread_step", "split_weights_step", "scad_cost", "split_bill_amortized_cost", "list_priced_cost"}

// allocsOf is the archive fixture as exporter/split's input.
func allocsOf(kc []kcRow) []split.Alloc {
	var out []split.Alloc
	for _, r := range kc {
		_, idle := kubecostNamespace(r)
		a := split.Alloc{
			Cluster: split.Cluster{Account: r.account, Region: r.region, ARN: r.clusterID, Name: r.cluster},
			Day:     r.day, Node: r.node, ProviderID: r.providerID, Namespace: r.namespace, Idle: idle,
			ControllerKind: r.controllerKind, Controller: r.controller, Pod: r.pod,
			Compute: r.cpu + r.cpuAdj + r.ram + r.ramAdj + r.gpu + r.gpuAdj, Network: r.network, LoadBalancer: r.lb,
		}
		for _, pv := range r.pvs {
			a.PVs = append(a.PVs, split.PV{ProviderID: pv.providerID, Cost: pv.cost + pv.adj})
		}
		out = append(out, a)
	}
	return out
}

// billOf reads the CUR fixture's resource-days and parents with the
// bill's Go reader (which internal/duckcheck holds equal to the SQL and
// to sums by hand).
func billOf(t *testing.T, rows []curfixture.Row) split.Bill {
	t.Helper()
	dir := t.TempDir()
	if _, err := curfixture.WriteExport(dir, curfixture.Export, rows, curfixture.Options{}); err != nil {
		t.Fatal(err)
	}
	s := curcheck.ReadDir(t, dir, zeroDay, zeroDay)
	return split.Bill{Resources: s.Resources, Parents: s.Parents}
}

// expectSplit is Kubecost's split of the fixture's bill and its steps per
// cluster_arn|namespace|date, with SCAD's net split + unused from the
// test's own loops over the pod lines (podLine).
func expectSplit(t *testing.T, kc []kcRow, rows []curfixture.Row) ([]split.Row, map[string]*split.Steps) {
	t.Helper()
	out := splittest.Split(allocsOf(kc), billOf(t, rows))
	scad := split.SCADNet{}
	for i := range rows {
		k, c, ok := podLine(&rows[i])
		if !ok {
			continue
		}
		key := parseKey(k)
		scad[key] += c.netSplit + c.netUnused
	}
	steps := map[string]*split.Steps{}
	for k, s := range splittest.NamespaceSteps(out, scad) {
		steps[k.Cluster.ARN+"|"+k.Namespace+"|"+date(k.Day)] = s
	}
	return out, steps
}

func setSteps(r *viewRow, s *split.Steps) {
	if s == nil {
		s = &split.Steps{}
		// A namespace-day with no split rows and no SCAD: every step 0.
	}
	for c, v := range map[string]float64{"kubecost_cost": s.Kubecost, "pricing_step": s.Pricing, "discounts_step": s.Discounts,
		"negotiated_step": s.Negotiated, "split_bill_cost": s.SplitBill, "idle_spread_step": s.IdleSpread,
		"split_weights_step": s.SplitWeights, "scad_cost": s.SCAD, "split_bill_amortized_cost": s.SplitBillAmortized,
		"list_priced_cost": s.ListPriced} {
		r.cost[c] = &v
	}
}

var zeroDay time.Time

// parseKey reads a cluster_arn|namespace|date key of a pod line back into
// split's key: the account, region and name are the ARN's.
func parseKey(k string) split.Key {
	p := strings.Split(k, "|")
	arn := strings.Split(p[0], ":")
	day, _ := time.Parse(time.DateOnly, p[2])
	return split.Key{Cluster: split.Cluster{Account: arn[4], Region: arn[3], ARN: p[0], Name: strings.TrimPrefix(arn[5], "cluster/")},
		Namespace: p[1], Day: day}
}
