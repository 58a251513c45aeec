package bill

import "time"

// ResourceKey is one resource-day of the bill; ResourceID is i-..., vol-... or a load
// balancer's ARN.
type ResourceKey struct {
	Account, Region, ResourceID, Kind string
	Day                               time.Time
}

// ResourceCost sums a resource-day's lines: amortized (AmortizedCost),
// net amortized (NetAmortizedCost) and public on-demand (PublicCost).
type ResourceCost struct {
	Amortized, Net, PublicOnDemand float64
	Lines                          int64
	// Cluster is the least cluster its lines' tags name (ClusterTag), "" for none: how
	// exporter/split finds a volume of a cluster that the archive does not list.
	Cluster string
}

// ParentKey is an instance-day as SCAD's pod lines name it: the pod ARN's account and region,
// split_line_item_parent_resource_id and the UTC day.
type ParentKey struct {
	Account, Region, InstanceID string
	Day                         time.Time
}

// ParentCost is what SCAD's EC2 pod lines split off one instance-day: the cluster of its pods
// (the least, should two name it, which SCAD does not produce) and their split and unused
// cost, gross and net, to hold split + unused against the instance's own lines.
type ParentCost struct {
	ClusterARN, Cluster                string
	Split, Unused, NetSplit, NetUnused float64
	Lines                              int64
}

// AddResource sums a resource line within the days and reports whether it did. SCAD's pod
// lines (Add sums them per parent) are not resource lines.
func (a *Aggregator) AddResource(l *ResourceLine) bool {
	if l.Operation == OpEKSPodEC2 && l.ParentResourceID != "" {
		return false
	}
	kind := ResourceKindOf(l)
	if kind == "" {
		return false
	}
	day := Day(&l.Line)
	if !a.inDays(day) {
		return false
	}
	c := entry(&a.sum.Resources, ResourceKey{Account: l.Account, Region: l.RegionCode, ResourceID: l.ResourceID, Kind: kind, Day: day})
	c.Amortized += AmortizedCost(l).or0()
	c.Net += NetAmortizedCost(l).or0()
	c.PublicOnDemand += PublicCost(l).or0()
	c.Lines++
	if t := l.ClusterTag; t != "" && (c.Cluster == "" || t < c.Cluster) {
		c.Cluster = t
	}
	a.sum.Stats.ResourceLines++
	return true
}

// addParent sums an EC2 pod line that Add summed into its parent instance-day.
func (a *Aggregator) addParent(l *Line, p *Pod, day time.Time) {
	c := entry(&a.sum.Parents, ParentKey{Account: p.Account, Region: p.Region, InstanceID: l.ParentResourceID, Day: day})
	if c.Lines == 0 || p.ClusterARN < c.ClusterARN { // the least, as the view's MIN
		c.ClusterARN, c.Cluster = p.ClusterARN, p.Cluster
	}
	c.Split += SplitCost(l).or0()
	c.Unused += UnusedCost(l).or0()
	c.NetSplit += NetSplitCost(l).or0()
	c.NetUnused += NetUnusedCost(l).or0()
	c.Lines++
}
