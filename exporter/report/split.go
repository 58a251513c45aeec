package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
)

// Kubecost's split of the bill (issue 46) in the report: the archive's allocations (splitRec:
// only the contract's columns the split and Kubecost's side read, by parquet-go's schema
// conversion), split by exporter/split over the bill's resource lines, summed into each
// comparison row's steps, as the view <prefix>_namespace_daily computes them.

type splitPV struct {
	Adjustment *float64 `parquet:"adjustment,optional"`
	Cost       *float64 `parquet:"cost,optional"`
	ProviderID *string  `parquet:"providerID,optional"`
}

type splitRec struct {
	Name           string  `parquet:"name"`
	ClusterID      string  `parquet:"properties.clusterid"`
	ClusterName    string  `parquet:"properties.eksClusterName"`
	Namespace      string  `parquet:"properties.namespace"`
	Node           string  `parquet:"properties.node"`
	ProviderID     string  `parquet:"properties.providerID"`
	Pod            string  `parquet:"properties.pod"`
	Controller     string  `parquet:"properties.controller"`
	ControllerKind string  `parquet:"properties.controllerKind"`
	CPU            float64 `parquet:"cpuCost"`
	CPUAdj         float64 `parquet:"cpuCostAdjustment"`
	RAM            float64 `parquet:"ramCost"`
	RAMAdj         float64 `parquet:"ramCostAdjustment"`
	GPU            float64 `parquet:"gpuCost"`
	GPUAdj         float64 `parquet:"gpuCostAdjustment"`
	Network        float64 `parquet:"networkCost"`
	NetworkAdj     float64 `parquet:"networkCostAdjustment"`
	LB             float64 `parquet:"loadBalancerCost"`
	LBAdj          float64 `parquet:"loadBalancerCostAdjustment"`
	PV             float64 `parquet:"pvCost"`
	PVAdj          float64 `parquet:"pvCostAdjustment"`
	// Idle shared in (shareIdle): schema version 2's appended columns, absent from older files.
	CPUIdle *float64           `parquet:"cpuCostIdle,optional"`
	RAMIdle *float64           `parquet:"ramCostIdle,optional"`
	GPUIdle *float64           `parquet:"gpuCostIdle,optional"`
	PVs     map[string]splitPV `parquet:"pvs,optional"`
}

// alloc is r as the split reads it; idle: r is an idle row (Idle).
func (r *splitRec) alloc(f File, idle bool) split.Alloc {
	a := split.Alloc{
		Cluster: split.Cluster{Account: f.Account, Region: f.Region, ARN: r.ClusterID, Name: r.ClusterName},
		Day:     f.Day, Node: r.Node, ProviderID: r.ProviderID, Namespace: r.Namespace, Pod: r.Pod,
		Controller: r.Controller, ControllerKind: r.ControllerKind, Idle: idle,
		Compute: r.CPU + r.CPUAdj + r.RAM + r.RAMAdj + r.GPU + r.GPUAdj, Network: r.Network + r.NetworkAdj, LoadBalancer: r.LB + r.LBAdj,
	}
	// Sorted by key so rows come out the same on every run; every entry counts, as in Merge.
	for _, k := range slices.Sorted(maps.Keys(r.PVs)) {
		pv := r.PVs[k]
		a.PVs = append(a.PVs, split.PV{ProviderID: or0(pv.ProviderID), Cost: or0(pv.Cost) + or0(pv.Adjustment)})
	}
	return a
}

// or0 is *p, the zero value for nil.
func or0[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// readAllocs reads the split's columns of the files and adds each row to Kubecost's side, kube.
func readAllocs(ctx context.Context, o Options, files []File, kube map[CompareKey]*KubecostCost) ([]split.Alloc, error) {
	var out []split.Alloc
	buf := make([]splitRec, 256)
	for _, f := range files {
		obj, err := exporter.OpenAt(ctx, o.Store, f.Key, o.TempDir, "kubecost-s3-exporter-report-*.parquet")
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", f.Key, err)
		}
		err = func() error {
			defer obj.Close()
			pf, err := parquet.OpenFile(obj, obj.Size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
			if err != nil {
				return err
			}
			r := parquet.NewGenericReader[splitRec](pf)
			defer r.Close()
			for {
				clear(buf)
				n, err := r.Read(buf)
				for i := range buf[:n] {
					r := &buf[i]
					ns := NamespaceOf(r.Namespace, r.Name)
					out = append(out, r.alloc(f, ns == Idle))
					entry(kube, CompareKey{f.Ref(), billNamespace(ns), f.Day}).addRow(r, ns == Idle)
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
			}
		}()
		if err != nil {
			return nil, fmt.Errorf("report: split columns of %s: %w", f.Key, err)
		}
	}
	return out, nil
}

// splitSteps computes the steps per comparison key (the split of the bill's resource-days,
// SCAD's net split + unused from its pod lines) and, from the same read, Kubecost's side. It
// reads one account, region and day at a time (whole cluster-days, as split.Splitter wants)
// and keeps only the steps: memory holds one day's allocations.
func splitSteps(ctx context.Context, o Options, files []File, sum *bill.Summary) (map[CompareKey]*split.Steps, map[CompareKey]*KubecostCost, error) {
	scad := split.SCADNet{}
	for k, c := range sum.Rows {
		key := split.Key{Cluster: split.Cluster{Account: k.Account, Region: k.Region, ARN: k.ClusterARN, Name: k.Cluster}, Namespace: k.Namespace, Day: k.Day}
		scad[key] += c.Total(bill.MNetSplit) + c.Total(bill.MNetUnused)
	}
	on := scad.On()
	sp := split.NewSplitter(split.Bill{Resources: sum.Resources, Parents: sum.Parents})
	out, kube := map[CompareKey]*split.Steps{}, map[CompareKey]*KubecostCost{}
	add := func(steps map[split.Key]*split.Steps) {
		for k, s := range steps {
			ref := ClusterRef{Account: k.Cluster.Account, Region: k.Cluster.Region, Name: k.Cluster.Name}
			if !o.billInScope(ref) {
				continue
			}
			ck := CompareKey{Cluster: ref, Namespace: k.Namespace, Day: k.Day}
			entry(out, ck).Add(s)
		}
	}
	for _, part := range byDay(files) {
		allocs, err := readAllocs(ctx, o, part, kube)
		if err != nil {
			return nil, nil, err
		}
		add(split.NamespaceStepsOn(sp.Add(allocs), nil, on))
	}
	add(split.NamespaceStepsOn(sp.BillOnly(), scad, on))
	return out, kube, nil
}

// byDay groups files per account, region and day, in that order.
func byDay(files []File) [][]File {
	order := func(a, b File) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.Region, b.Region), a.Day.Compare(b.Day))
	}
	files = slices.Clone(files)
	slices.SortStableFunc(files, order)
	var out [][]File
	for i, f := range files {
		if i == 0 || order(files[i-1], f) != 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], f)
	}
	return out
}
