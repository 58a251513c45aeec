//go:build cgo

package billcheck_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/parquetout"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/curfixture"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/pqcheck"
)

// kcRow is one allocation of the archive fixture. Costs are what the
// exporter writes (0 when Kubecost omits them); idle is the nullable
// cpuCostIdle (nil = null).
type kcRow struct {
	account, region, clusterID, cluster   string
	day                                   time.Time
	name, namespace                       string
	cpu, cpuAdj, ram, ramAdj, gpu, gpuAdj float64
	pv, network, lb, shared               float64
	cpuIdle                               *float64
	// The split's inputs (issue 46): the node and its providerID, the
	// pod and controller, and the pvs entries (volume providerID, cost).
	node, providerID, pod      string
	controllerKind, controller string
	pvs                        []pvEntry
}

// pvEntry is one entry of an allocation's pvs.
type pvEntry struct {
	providerID string
	cost, adj  float64
}

func (r kcRow) total() float64 {
	return r.cpu + r.cpuAdj + r.ram + r.ramAdj + r.gpu + r.gpuAdj + r.pv + r.network + r.lb + r.shared
}

// Other clusters of the archive: a third prod in an account without a
// bill, and a cluster that is not EKS (its CLUSTER_ID is no ARN).
const (
	accountC  = "777788889999"
	clusterC  = "arn:aws:eks:us-east-1:777788889999:cluster/prod"
	onPremID  = "onprem-prod"
	onPremReg = "us-east-1"
)

// archiveRows is the Kubecost side next to curfixture.Canonical: the
// namespaces both sides have (curfixture.KubecostAndBill), monitoring
// that only Kubecost has (curfixture.KubecostOnly), none of experiments
// (curfixture.BillOnly), Kubecost's idle rows in both idle spellings, a
// namespace with idle shared into it, and two clusters the bill has not:
// another account's prod and a cluster that is not EKS, both with a
// payments namespace on Day1, which must not take the bill's payments.
func archiveRows() []kcRow {
	a := func(day time.Time, ns string) kcRow {
		return kcRow{account: curfixture.AccountA, region: curfixture.Region, clusterID: curfixture.ClusterA,
			cluster: curfixture.ClusterName, day: day, name: "prod/node-1/" + ns + "/pod/c", namespace: ns}
	}
	d1, d2, d3 := curfixture.Day1, curfixture.Day2, curfixture.Day3
	f := func(v float64) *float64 { return &v }
	rows := []kcRow{}
	add := func(r kcRow) { rows = append(rows, r) }

	// Nodes: ip-ri on the RI-covered instance, ip-gpu on the Savings Plan
	// one, ip-spot on the Spot one, ip-nobill on an instance the bill
	// lacks, a Fargate node; the gp3 volume is payments' and monitoring's.
	on := func(r kcRow, node, instance string) kcRow {
		r.node, r.providerID = node, instance
		if instance != "" {
			r.providerID = "aws:///us-east-1a/" + instance
		}
		return r
	}
	r := on(a(d1, "payments"), "ip-ri", curfixture.InstRI)
	r.cpu, r.ram, r.ramAdj, r.pv, r.network, r.lb = 0.05, 0.02, -0.001, 0.01, 0.003, 0.002
	r.pod, r.controllerKind, r.controller = "api-1", "deployment", "api"
	r.pvs = []pvEntry{{"aws://us-east-1a/" + curfixture.Volume, 0.012, -0.002}}
	add(r)
	// A second payments pod on ip-ri without network cost: the node's data
	// transfer goes by network cost, not compute.
	r = on(a(d1, "payments"), "ip-ri", curfixture.InstRI)
	r.name, r.cpu, r.pod, r.controllerKind, r.controller = "prod/ip-ri/payments/worker-1/c", 0.02, "worker-1", "deployment", "worker"
	add(r)
	r = on(a(d2, "payments"), "ip-ri", curfixture.InstRI)
	r.cpu, r.ram, r.cpuIdle = 0.09, 0.04, f(0.005)
	r.pod = "api-1"
	add(r)
	r = a(d3, "payments")
	r.cpu, r.ram = 0.03, 0.01
	add(r)
	r = on(a(d1, "ml"), "ip-gpu", curfixture.InstGPU)
	r.cpu, r.ram, r.gpu, r.gpuAdj = 0.2, 0.1, 1.5, 0.1
	r.pod = "trainer"
	add(r)
	// ml's GPU node's idle row (idleByNode).
	r = on(a(d1, ""), "ip-gpu", curfixture.InstGPU)
	r.name, r.cpu, r.ram, r.gpu = "prod/ip-gpu/__idle__", 0.05, 0.02, 0.03
	add(r)
	for _, d := range []time.Time{d1, d2} {
		r = on(a(d, "batch"), "fargate-ip-10-0-0-9", "")
		r.cpu, r.ram = 0.04, 0.01
		add(r)
	}
	r = on(a(d1, "monitoring"), "ip-spot", curfixture.InstSpot)
	r.cpu, r.ram, r.pv = 0.03, 0.02, 0.05
	r.pvs = []pvEntry{{curfixture.Volume, 0.05, 0}}
	add(r)
	// A second monitoring pod on a node the bill has no line of, with a
	// volume that is not EBS.
	r = on(a(d1, "monitoring"), "ip-nobill", curfixture.InstNoBill)
	r.name, r.cpu, r.pv, r.pod = "prod/ip-nobill/monitoring/agent/c", 0.01, 0.004, "agent"
	r.pvs = []pvEntry{{"nfs-share-1", 0.004, 0}}
	add(r)
	for _, d := range []time.Time{d1, d2} {
		r = a(d, "")
		r.name, r.cpu, r.ram = "prod/__idle__", 0.3, 0.1
		add(r)
	}
	// A name that ends like __idle__ but is not Kubecost's idle marker.
	r = a(d1, "")
	r.name, r.cpu = "prod/x__idle__", 0.007
	add(r)

	add(kcRow{account: curfixture.AccountB, region: curfixture.Region, clusterID: curfixture.ClusterB, cluster: "prod",
		day: d1, name: "prod/n/payments/api/api", namespace: "payments", cpu: 0.06, ram: 0.03,
		node: "n", providerID: curfixture.InstB, pod: "api"})
	add(kcRow{account: curfixture.AccountB, region: curfixture.Region, clusterID: curfixture.ClusterB, cluster: "prod",
		day: d1, name: "__idle__", cpu: 0.05, node: "n"})
	// C's bill has its instance's lines but no SCAD: the split without
	// SCAD, the node's idle row kept apart.
	add(kcRow{account: accountC, region: curfixture.Region, clusterID: clusterC, cluster: "prod",
		day: d1, name: "prod/n/payments/api/api", namespace: "payments", cpu: 0.11, node: "c-1", providerID: curfixture.InstNoSCAD, pod: "api"})
	add(kcRow{account: accountC, region: curfixture.Region, clusterID: clusterC, cluster: "prod",
		day: d1, name: "prod/c-1/__idle__", cpu: 0.07, node: "c-1"})
	add(kcRow{account: curfixture.AccountA, region: onPremReg, clusterID: onPremID, cluster: onPremID,
		day: d1, name: "prod/n/payments/api/api", namespace: "payments", cpu: 0.5})
	return rows
}

// writeArchive writes rows as the exporter does: one Parquet file per
// cluster and day at its key (exporter.Layout), with the exporter's writer.
func writeArchive(t *testing.T, dir string, rows []kcRow) {
	t.Helper()
	type file struct {
		clusterID string
		day       time.Time
	}
	byFile := map[file][]kcRow{}
	var order []file
	for _, r := range rows {
		k := file{r.clusterID, r.day}
		if _, ok := byFile[k]; !ok {
			order = append(order, k)
		}
		byFile[k] = append(byFile[k], r)
	}
	num := func(rec *schema.Record, name string, v float64) {
		i := schema.DoubleIndex(name)
		if i < 0 {
			t.Fatalf("no column %s", name)
		}
		rec.Num[i] = v
	}
	for _, k := range order {
		rs := byFile[k]
		first := rs[0]
		p := schema.NewProjection(first.clusterID, first.cluster, nil, nil)
		l := exporter.Layout{Account: first.account, Region: first.region, Cluster: first.cluster}
		path := filepath.Join(dir, filepath.FromSlash(l.Key(k.day, exporter.Snappy)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := parquetout.NewWriter(out, p, parquetout.Options{PageBufferDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		rec := p.NewRecord()
		for _, r := range rs {
			p.Reset(rec)
			rec.Name = r.name
			rec.Start, rec.End = r.day.UnixMilli(), r.day.Add(24*time.Hour).UnixMilli()
			rec.Props[schema.PropNamespace] = r.namespace
			for name, v := range map[string]float64{"cpuCost": r.cpu, "cpuCostAdjustment": r.cpuAdj, "ramCost": r.ram,
				"ramCostAdjustment": r.ramAdj, "gpuCost": r.gpu, "gpuCostAdjustment": r.gpuAdj, "pvCost": r.pv,
				"networkCost": r.network, "loadBalancerCost": r.lb, "sharedCost": r.shared, "totalCost": r.total()} {
				num(rec, name, v)
			}
			if r.cpuIdle != nil {
				rec.X[schema.XCPUCostIdle].Set, rec.X[schema.XCPUCostIdle].Num = true, *r.cpuIdle
			}
			rec.Props[schema.PropNode], rec.Props[schema.PropProviderID], rec.Props[schema.PropPod] = r.node, r.providerID, r.pod
			rec.Props[schema.PropControllerKind], rec.Props[schema.PropController] = r.controllerKind, r.controller
			setPVs(rec, r.pvs)
			p.Finish(rec)
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// setPVs writes an allocation's pvs entries (keyed as Kubecost keys them).
func setPVs(rec *schema.Record, pvs []pvEntry) {
	x := &rec.X[schema.XPVs]
	x.Set = len(pvs) > 0
	for i, pv := range pvs {
		var e schema.Entry
		e.Key = fmt.Sprintf("cluster=prod:name=pv-%d", i)
		e.Fields[pqcheck.FieldIndex(schema.XPVs, "providerID")] = schema.Opt{Str: pv.providerID, Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XPVs, "cost")] = schema.Opt{Num: pv.cost, Set: true}
		e.Fields[pqcheck.FieldIndex(schema.XPVs, "adjustment")] = schema.Opt{Num: pv.adj, Set: true}
		x.Entries = append(x.Entries, e)
	}
}
