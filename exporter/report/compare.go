package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/split"
)

// The comparison with the bill (issue 43): per cluster, namespace and UTC day, Kubecost's
// compute next to the bill's split cost allocation data, with the rows and numbers of the
// Athena view <prefix>_namespace_daily (terraform/modules/bill), so report and dashboards agree:
//   - Kubecost's compute is CPU + RAM + GPU with adjustments; the bill's is its pods' split +
//     unused cost (or a Fargate line's cost): SCAD gives an instance's unused capacity to its
//     pods.
//   - Kubecost's idle rows are a namespace "__idle__" only Kubecost has, so a cluster's total
//     holds Kubecost's compute with idle against the bill's split + unused. Other rows without
//     a namespace (shared, unmounted, unallocated) are "__unallocated__".
//   - What only Kubecost counts (PVs, network, load balancers) is shown apart, never compared:
//     SCAD splits EC2 and Fargate compute only
//     (https://docs.aws.amazon.com/cur/latest/userguide/split-cost-allocation-data.html).
//
// Clusters match by account, region and name (the archive's account_id=/region= partitions
// and file name, derived from the cluster's ARN, against each pod line's cluster ARN), never by
// name alone. A row only one side has is kept and marked.

// Namespaces of the comparison for rows without one, as the view names them.
const (
	BillIdle        = schema.IdleName
	BillUnallocated = schema.UnallocatedName
)

// billNamespace is the comparison's namespace of a NamespaceOf: real ones stay, idle is
// "__idle__", others "__unallocated__". A real namespace is neither "Idle" nor holds "_"
// (Kubernetes names are lowercase DNS labels).
func billNamespace(ns string) string {
	switch ns {
	case Idle:
		return BillIdle
	case schema.SharedName, schema.UnmountedName, Unallocated:
		return BillUnallocated
	}
	return ns
}

// Present says which side has a row.
type Present string

const (
	Both         Present = "both"
	KubecostOnly Present = "kubecost_only"
	BillOnly     Present = "bill_only"
)

// KubecostCost is Kubecost's side of one row; each part includes its adjustment.
type KubecostCost struct {
	CPU, RAM, GPU   float64
	Idle            float64 // an __idle__ row's compute, else the idle shared into the row
	PV, Network, LB float64
	rows            int64
}

// Compute is what compares with the bill: CPU + RAM + GPU.
func (k KubecostCost) Compute() float64 { return k.CPU + k.RAM + k.GPU }

// OnlyKubecost is what the bill does not split: PV + network + load balancers.
func (k KubecostCost) OnlyKubecost() float64 { return k.PV + k.Network + k.LB }

// addRow adds an archive row of the key (Idle: an __idle__ row).
func (k *KubecostCost) addRow(r *splitRec, idle bool) {
	cpu, ram, gpu := r.CPU+r.CPUAdj, r.RAM+r.RAMAdj, r.GPU+r.GPUAdj
	k.CPU += cpu
	k.RAM += ram
	k.GPU += gpu
	if idle {
		k.Idle += cpu + ram + gpu
	} else {
		k.Idle += or0(r.CPUIdle) + or0(r.RAMIdle) + or0(r.GPUIdle)
	}
	k.PV += r.PV + r.PVAdj
	k.Network += r.Network + r.NetworkAdj
	k.LB += r.LB + r.LBAdj
	k.rows++
}

func (k *KubecostCost) merge(o KubecostCost) {
	k.CPU += o.CPU
	k.RAM += o.RAM
	k.GPU += o.GPU
	k.Idle += o.Idle
	k.PV += o.PV
	k.Network += o.Network
	k.LB += o.LB
	k.rows += o.rows
}

// BillCost is the bill's side of one row: exporter/bill's measures of the CUR's pod lines.
type BillCost struct {
	Split, Unused, NetSplit, NetUnused float64
	PublicOnDemand                     float64
	Lines                              int64
}

// Cost is what compares with Kubecost's compute: split + unused.
func (b BillCost) Cost() float64 { return b.Split + b.Unused }

// Net is Cost after discounts.
func (b BillCost) Net() float64 { return b.NetSplit + b.NetUnused }

func (b *BillCost) merge(o BillCost) {
	b.Split += o.Split
	b.Unused += o.Unused
	b.NetSplit += o.NetSplit
	b.NetUnused += o.NetUnused
	b.PublicOnDemand += o.PublicOnDemand
	b.Lines += o.Lines
}

// ClusterRef names a cluster as both sides can: account, region, EKS name.
type ClusterRef struct {
	Account, Region, Name string
}

func (c ClusterRef) compare(o ClusterRef) int {
	return cmp.Or(cmp.Compare(c.Name, o.Name), cmp.Compare(c.Account, o.Account), cmp.Compare(c.Region, o.Region))
}

// CompareKey is one row of the comparison; a zero Day is a total over the report's days.
type CompareKey struct {
	Cluster   ClusterRef
	Namespace string
	Day       time.Time
}

// CompareRow is Kubecost next to the bill for one key.
type CompareRow struct {
	CompareKey
	Kubecost KubecostCost
	Bill     BillCost
	// Steps explain a day's row in dollars (split.Steps), as the view's step columns; zero on
	// rows over days, whose steps are the Waterfalls.
	Steps   split.Steps
	Present Present
}

// Difference is Kubecost's compute less the bill's cost: positive where
// Kubecost prices higher than the bill (the view's difference).
func (r CompareRow) Difference() float64 { return r.Kubecost.Compute() - r.Bill.Cost() }

// Comparison is the report's section on the bill.
type Comparison struct {
	Source string // the CUR export's location as the user gave it
	// What was read of the export: Parquet files, pod lines, row groups and those skipped by
	// their date statistics.
	Files, Lines, RowGroups, Skipped int64
	Clusters                         []ClusterComparison
	// From and To are the days compared; Outside the bill's cost per cluster on days of its
	// billing periods they leave out (splitOutside); ReadFrom and ReadTo the days read.
	From, To         time.Time
	Outside          []OutsideDays
	ReadFrom, ReadTo time.Time
	// Waterfalls are the steps per cluster over the days (waterfall.go); none without the
	// bill's resource lines.
	Waterfalls []ClusterWaterfall
}

// ClusterComparison is one cluster's rows.
type ClusterComparison struct {
	Cluster    ClusterRef
	Total      CompareRow   // over every namespace and day
	Namespaces []CompareRow // per namespace over the days, largest first
	Daily      []CompareRow // per namespace and day, by day then namespace
}

// compareSides joins Kubecost's and the bill's rows into the section's tables.
func compareSides(kube map[CompareKey]*KubecostCost, bill map[CompareKey]*BillCost, steps map[CompareKey]*split.Steps) []ClusterComparison {
	rows := map[CompareKey]*CompareRow{}
	for k, v := range kube {
		entry(rows, k).Kubecost = *v
	}
	for k, v := range bill {
		entry(rows, k).Bill = *v
	}
	for k, v := range steps {
		entry(rows, k).Steps = *v
	}
	byCluster := map[ClusterRef]*ClusterComparison{}
	for k, r := range rows {
		r.CompareKey = k
		r.mark()
		c := entry(byCluster, k.Cluster)
		c.Daily = append(c.Daily, *r)
	}
	out := make([]ClusterComparison, 0, len(byCluster))
	for ref, c := range byCluster {
		c.Cluster, c.Total.Cluster = ref, ref
		slices.SortFunc(c.Daily, func(a, b CompareRow) int {
			return cmp.Or(a.Day.Compare(b.Day), cmp.Compare(a.Namespace, b.Namespace))
		})
		byNS := map[string]int{} // index in c.Namespaces
		for _, r := range c.Daily {
			i, ok := byNS[r.Namespace]
			if !ok {
				i = len(c.Namespaces)
				byNS[r.Namespace] = i
				c.Namespaces = append(c.Namespaces, CompareRow{CompareKey: CompareKey{Cluster: c.Cluster, Namespace: r.Namespace}})
			}
			c.Namespaces[i].add(r)
			c.Total.add(r)
		}
		for i := range c.Namespaces {
			c.Namespaces[i].mark()
		}
		c.Total.mark()
		slices.SortFunc(c.Namespaces, func(a, b CompareRow) int {
			return cmp.Or(cmp.Compare(max(b.Kubecost.Compute(), b.Bill.Cost()), max(a.Kubecost.Compute(), a.Bill.Cost())),
				cmp.Compare(a.Namespace, b.Namespace))
		})
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ClusterComparison) int { return a.Cluster.compare(b.Cluster) })
	return out
}

// add sums a day's row into a row over days (whose steps are the Waterfalls).
func (r *CompareRow) add(day CompareRow) {
	r.Kubecost.merge(day.Kubecost)
	r.Bill.merge(day.Bill)
}

// mark sets which side has the row.
func (r *CompareRow) mark() {
	switch kube, bill := r.Kubecost.rows > 0, r.Bill.Lines > 0; {
	case kube && bill:
		r.Present = Both
	case kube:
		r.Present = KubecostOnly
	default:
		r.Present = BillOnly
	}
}
