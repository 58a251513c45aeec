// Package splittest holds what only tests call of exporter/split: the
// whole-archive split in one call, its rows sorted, the steps without a
// precomputed SCAD-on set, cluster-day sums, and the check of SCAD's pod
// lines against their instances' own lines.
package splittest

import (
	"cmp"
	"math"
	"slices"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
)

// Split allocates the bill to Kubecost's rows in one Splitter. Rows come
// out sorted.
func Split(allocs []split.Alloc, billed split.Bill) []split.Row {
	s := split.NewSplitter(billed)
	out := append(s.Add(allocs), s.BillOnly()...)
	Sort(out)
	return out
}

// Sort orders rows by cluster, day, kind, resource, node, namespace, pod.
func Sort(rows []split.Row) {
	slices.SortFunc(rows, func(a, b split.Row) int {
		return cmp.Or(cmp.Compare(a.Cluster.ARN, b.Cluster.ARN), cmp.Compare(a.Cluster.Account, b.Cluster.Account),
			a.Day.Compare(b.Day), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ResourceID, b.ResourceID),
			cmp.Compare(a.Node, b.Node), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Controller, b.Controller),
			cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.KubecostCost, b.KubecostCost))
	})
}

// NamespaceSteps computes the steps per namespace-day of rows (Split's),
// with SCAD's costs (nil: SCAD off everywhere).
func NamespaceSteps(rows []split.Row, scad split.SCADNet) map[split.Key]*split.Steps {
	return split.NamespaceStepsOn(rows, scad, scad.On())
}

// ClusterSteps sums namespace steps per cluster-day.
func ClusterSteps(ns map[split.Key]*split.Steps) map[split.ClusterDay]*split.Steps {
	out := map[split.ClusterDay]*split.Steps{}
	for k, s := range ns {
		ck := split.ClusterDay{Cluster: k.Cluster, Day: k.Day}
		c := out[ck]
		if c == nil {
			c = &split.Steps{}
			out[ck] = c
		}
		c.Add(s)
	}
	return out
}

// SCADCheck holds SCAD's pod lines of one instance-day against the
// instance's own lines: SCAD gives an instance's cost to its pods as
// split cost plus unused cost (sca-eks:
// https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html), so
// split + unused should be the instance's amortized cost, and the net
// split + net unused its net amortized cost.
type SCADCheck struct {
	Key                          bill.ParentKey
	SCAD, SCADNet                float64 // split + unused, gross and net
	Instance, InstanceNet        float64 // the instance lines (0 when none)
	HasInstance, Agree, NetAgree bool
}

// CheckSCAD compares every instance-day SCAD's pod lines name with the
// instance's lines; Agree is within 1e-9 relative. Sorted by key.
func CheckSCAD(b split.Bill) []SCADCheck {
	var out []SCADCheck
	for k, p := range b.Parents {
		c := SCADCheck{Key: k, SCAD: p.Split + p.Unused, SCADNet: p.NetSplit + p.NetUnused}
		if r := b.Resources[bill.ResourceKey{Account: k.Account, Region: k.Region, ResourceID: k.InstanceID, Kind: bill.KindInstance, Day: k.Day}]; r != nil {
			c.HasInstance, c.Instance, c.InstanceNet = true, r.Amortized, r.Net
		}
		c.Agree, c.NetAgree = c.HasInstance && agree(c.SCAD, c.Instance), c.HasInstance && agree(c.SCADNet, c.InstanceNet)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b SCADCheck) int {
		return cmp.Or(cmp.Compare(a.Key.Account, b.Key.Account), cmp.Compare(a.Key.InstanceID, b.Key.InstanceID), a.Key.Day.Compare(b.Key.Day))
	})
	return out
}

func agree(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)+math.Abs(b)) }
