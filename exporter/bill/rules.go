package bill

import (
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

// NullFloat is a double column's value: CUR writes null where a column does not apply (a net
// cost without discounts, a split cost on Fargate), and null is not 0 to SUM or the CASEs.
type NullFloat struct {
	V     float64
	Valid bool
}

// Float is a non-null value.
func Float(v float64) NullFloat { return NullFloat{V: v, Valid: true} }

// or0 is COALESCE(x, 0E0).
func (f NullFloat) or0() float64 {
	if f.Valid {
		return f.V
	}
	return 0
}

// Line is the projection of one CUR 2.0 line that the rules read. A null string reads as "":
// every rule treats both alike (NULL = 'x' and NULL LIKE 'x' are not true; COALESCE(x, ”) = ”
// is true for both). A null line_item_usage_start_date reads as the zero time.
type Line struct {
	LineItemType, Operation, UsageType string
	ResourceID, ParentResourceID       string
	UsageStart                         time.Time

	SplitCost, UnusedCost, NetSplitCost, NetUnusedCost NullFloat
	PublicOnDemandSplit, PublicOnDemandUnused          NullFloat
	UnblendedCost, NetUnblendedCost, PublicOnDemand    NullFloat
	SPEffectiveCost, SPNetEffectiveCost                NullFloat
}

// Operations of EKS pod lines (dictionary: line_item_operation; sca-eks).
const (
	OpEKSPodEC2  = "EKSPod-EC2"
	OpFargatePod = "FargatePod"
	// The line item types of Fargate pod lines the view keeps.
	TypeUsage            = "Usage"
	TypeSPCoveredUsage   = "SavingsPlanCoveredUsage"
	TypeDiscountedUsage  = "DiscountedUsage"   // RI-covered, on the instance's own lines
	podIDPattern         = "arn:%:eks:%:%:pod" // first '/'-part of a pod's resource id
	podIDSlashesPattern  = "%/%/%/%"           // cluster, namespace and pod parts present
	fargateCPUPattern    = "%Fargate-vCPU-Hours:perCPU"
	fargateMemoryPattern = "%Fargate-GB-Hours"
	ec2CPUPattern        = "%EKS-EC2-vCPU-Hours"
	ec2MemoryPattern     = "%EKS-EC2-GB-Hours"
	ec2GPUPattern        = "%EKS-EC2-Accelerator-Hours"
	spotPattern          = "%Spot%"
)

// Kind is what a pod line prices: CPU, memory or GPU.
type Kind int8

const (
	NoKind Kind = -1
	CPU    Kind = 0
	Memory Kind = 1
	GPU    Kind = 2
	// NumKinds is the number of kinds, for arrays indexed by Kind.
	NumKinds = 3
)

// String is the kind's name in SQL and column names: cpu, memory, gpu.
func (k Kind) String() string {
	if k < 0 || k >= NumKinds {
		return ""
	}
	return [NumKinds]string{"cpu", "memory", "gpu"}[k]
}

// Rule is one rule of AWS's SCAD reading written twice: SQL over the CUR 2.0 columns (Athena
// and DuckDB run it) and Eval, which the reader calls; the test wants equal values on every
// fixture line. Eval returns bool, string, Kind's name ("" for NULL), NullFloat or a UTC day
// (zero for NULL). L is Line, or ResourceLine for the resource rules (resource.go).
type Rule[L any] struct {
	Name string // the column the SQL of the lines names it
	SQL  string
	Cite string
	Eval func(*L) any
}

// IsPodLine is the view's WHERE for EKS (its ECS branches dropped), without the id's shape:
//   - EC2: operation EKSPod-EC2 and not (no parent instance and a split cost of 0). SQL's
//     three-valued logic is kept: a null split cost is dropped without a parent (NOT (TRUE AND
//     NULL) is NULL), kept with one.
//   - Fargate: Fargate vCPU/GB usage types of type Usage or SavingsPlanCoveredUsage, and
//     operation FargatePod (ECS's FargateTask has the same usage types).
//
// Lines without a start date have no day and are dropped.
func IsPodLine(l *Line) bool {
	if l.UsageStart.IsZero() {
		return false
	}
	switch l.Operation {
	case OpEKSPodEC2:
		noParent := l.ParentResourceID == ""
		return !(noParent && (!l.SplitCost.Valid || l.SplitCost.V == 0))
	case OpFargatePod:
		return (Like(l.UsageType, fargateCPUPattern) || Like(l.UsageType, fargateMemoryPattern)) &&
			(l.LineItemType == TypeSPCoveredUsage || l.LineItemType == TypeUsage)
	}
	return false
}

const isPodLineSQL = `(line_item_usage_start_date IS NOT NULL AND (` +
	`(line_item_operation = '` + OpEKSPodEC2 + `' AND NOT (COALESCE(split_line_item_parent_resource_id, '') = '' AND split_line_item_split_cost = 0E0))` +
	` OR (line_item_operation = '` + OpFargatePod + `' AND (line_item_usage_type LIKE '` + fargateCPUPattern + `' OR line_item_usage_type LIKE '` + fargateMemoryPattern + `')` +
	` AND line_item_line_item_type IN ('` + TypeSPCoveredUsage + `', '` + TypeUsage + `'))))`

// Pod is what a pod's resource id names.
type Pod struct {
	ClusterARN               string // arn:<partition>:eks:<region>:<account>:cluster/<name>
	Account, Region, Cluster string
	Namespace, Name          string
}

// ParseResourceID reads a pod's line_item_resource_id,
// arn:<partition>:eks:<region>:<account>:pod/<cluster>/<namespace>/<pod>/<uid> (sca-eks; the
// view's cluster_arn and namespace): the cluster ARN is the first '/'-part with "pod" replaced
// by "cluster", '/' and the second part. ok is false for other shapes (the view trusts the
// operation). Unlike the view, FargatePod lines get the same cluster ARN (the view replaces
// "task" there, for ECS, and keeps ":pod").
func ParseResourceID(id string) (p Pod, ok bool) {
	head := SplitPart(id, "/", 1)
	if !Like(head, podIDPattern) || !Like(id, podIDSlashesPattern) {
		return Pod{}, false
	}
	p.Cluster = SplitPart(id, "/", 2)
	p.ClusterARN = strings.ReplaceAll(head, "pod", "cluster") + "/" + p.Cluster
	p.Region = SplitPart(head, ":", 4)
	p.Account = SplitPart(head, ":", 5)
	p.Namespace = SplitPart(id, "/", 3)
	p.Name = SplitPart(id, "/", 4)
	return p, true
}

const (
	podIDValidSQL = `(split_part(line_item_resource_id, '/', 1) LIKE '` + podIDPattern + `' AND line_item_resource_id LIKE '` + podIDSlashesPattern + `')`
	clusterSQL    = `split_part(line_item_resource_id, '/', 2)`
	clusterARNSQL = `concat(replace(split_part(line_item_resource_id, '/', 1), 'pod', 'cluster'), '/', ` + clusterSQL + `)`
	regionSQL     = `split_part(split_part(line_item_resource_id, '/', 1), ':', 4)`
	accountSQL    = `split_part(split_part(line_item_resource_id, '/', 1), ':', 5)`
	namespaceSQL  = `split_part(line_item_resource_id, '/', 3)`
	podNameSQL    = `split_part(line_item_resource_id, '/', 4)`
)

// IsPod is the whole filter: a pod line with a pod's resource id.
func IsPod(l *Line) bool {
	if !IsPodLine(l) {
		return false
	}
	_, ok := ParseResourceID(l.ResourceID)
	return ok
}

const isPodSQL = `(` + isPodLineSQL + ` AND ` + podIDValidSQL + `)`

// KindOf is the view's usage type patterns of its cpu/memory/gpu cost columns. A pod line of
// another usage type adds to none of them: NoKind, left out of the summary.
func KindOf(l *Line) Kind {
	switch l.Operation {
	case OpEKSPodEC2:
		switch {
		case Like(l.UsageType, ec2CPUPattern):
			return CPU
		case Like(l.UsageType, ec2MemoryPattern):
			return Memory
		case Like(l.UsageType, ec2GPUPattern):
			return GPU
		}
	case OpFargatePod:
		switch {
		case Like(l.UsageType, fargateCPUPattern):
			return CPU
		case Like(l.UsageType, fargateMemoryPattern):
			return Memory
		}
	}
	return NoKind
}

const kindSQL = `(CASE WHEN line_item_operation = '` + OpEKSPodEC2 + `' THEN (CASE` +
	` WHEN line_item_usage_type LIKE '` + ec2CPUPattern + `' THEN 'cpu'` +
	` WHEN line_item_usage_type LIKE '` + ec2MemoryPattern + `' THEN 'memory'` +
	` WHEN line_item_usage_type LIKE '` + ec2GPUPattern + `' THEN 'gpu' END)` +
	` WHEN line_item_operation = '` + OpFargatePod + `' THEN (CASE` +
	` WHEN line_item_usage_type LIKE '` + fargateCPUPattern + `' THEN 'cpu'` +
	` WHEN line_item_usage_type LIKE '` + fargateMemoryPattern + `' THEN 'memory' END) END)`

// netOr is the view's net CASE: net when COALESCE(net, 0) > 0, gross when 0, and 0 when
// negative (the view's ELSE 0E0, kept).
func netOr(net, gross NullFloat) NullFloat {
	switch n := net.or0(); {
	case n > 0:
		return net
	case n == 0:
		return gross
	}
	return Float(0)
}

func netOrSQL(net, gross string) string {
	return `(CASE WHEN COALESCE(` + net + `, 0E0) > 0E0 THEN ` + net +
		` WHEN COALESCE(` + net + `, 0E0) = 0E0 THEN ` + gross + ` ELSE 0E0 END)`
}

// byLaunch is CASE on the operation: EC2 pods, Fargate pods, else NULL.
func byLaunch(l *Line, ec2, fargate func(*Line) NullFloat) NullFloat {
	switch l.Operation {
	case OpEKSPodEC2:
		return ec2(l)
	case OpFargatePod:
		return fargate(l)
	}
	return NullFloat{}
}

func byLaunchSQL(ec2, fargate string) string {
	return `(CASE WHEN line_item_operation = '` + OpEKSPodEC2 + `' THEN ` + ec2 +
		` WHEN line_item_operation = '` + OpFargatePod + `' THEN ` + fargate + ` END)`
}

func null(*Line) NullFloat { return NullFloat{} }

// fargateCost is the view's amortized Fargate cost: SP effective cost if covered, else unblended.
func fargateCost(l *Line) NullFloat {
	if l.LineItemType == TypeSPCoveredUsage {
		return l.SPEffectiveCost
	}
	return l.UnblendedCost
}

const fargateCostSQL = `(CASE WHEN line_item_line_item_type = '` + TypeSPCoveredUsage + `' THEN savings_plan_savings_plan_effective_cost ELSE line_item_unblended_cost END)`

// SplitCost is the pod's amortized cost (the view's amortized_split_*_cost):
// split_line_item_split_cost on EC2, fargateCost on Fargate. The view multiplies EC2 split
// costs by the parent instance's usage share in the identity_time_interval (a join on its
// RunInstances lines); the shares sum to 1, so totals are unchanged and no join is done here.
// (Where the view's join finds no instance line it loses the cost; here it is kept.)
func SplitCost(l *Line) NullFloat {
	return byLaunch(l, func(l *Line) NullFloat { return l.SplitCost }, fargateCost)
}

// UnusedCost is split_line_item_unused_cost; Fargate has none.
func UnusedCost(l *Line) NullFloat {
	return byLaunch(l, func(l *Line) NullFloat { return l.UnusedCost }, null)
}

// NetSplitCost is the view's net_amortized_split_*_cost: on EC2 netOr of the split cost; on
// Fargate, when line_item_net_unblended_cost is positive, the net SP effective cost (covered)
// or net unblended cost, else the Fargate cost.
func NetSplitCost(l *Line) NullFloat {
	return byLaunch(l,
		func(l *Line) NullFloat { return netOr(l.NetSplitCost, l.SplitCost) },
		func(l *Line) NullFloat {
			net := l.NetUnblendedCost
			if l.LineItemType == TypeSPCoveredUsage && net.or0() > 0 {
				return l.SPNetEffectiveCost
			}
			return netOr(net, fargateCost(l))
		})
}

const fargateNetSQL = `(CASE WHEN COALESCE(line_item_net_unblended_cost, 0E0) > 0E0 THEN (CASE WHEN line_item_line_item_type = '` + TypeSPCoveredUsage +
	`' THEN savings_plan_net_savings_plan_effective_cost ELSE line_item_net_unblended_cost END)` +
	` WHEN COALESCE(line_item_net_unblended_cost, 0E0) = 0E0 THEN ` + fargateCostSQL + ` ELSE 0E0 END)`

// NetUnusedCost is the view's net_amortized_split_unused_*_cost (EC2 only).
func NetUnusedCost(l *Line) NullFloat {
	return byLaunch(l, func(l *Line) NullFloat { return netOr(l.NetUnusedCost, l.UnusedCost) }, null)
}

// PublicOnDemandSplit is the view's public_on_demand_split_*_cost; on Fargate the public
// on-demand cost, or the unblended cost of a Spot usage type.
func PublicOnDemandSplit(l *Line) NullFloat {
	return byLaunch(l, func(l *Line) NullFloat { return l.PublicOnDemandSplit }, func(l *Line) NullFloat {
		if Like(l.UsageType, spotPattern) {
			return l.UnblendedCost
		}
		return l.PublicOnDemand
	})
}

// PublicOnDemandUnused is the unused cost at public on-demand rates (EC2).
func PublicOnDemandUnused(l *Line) NullFloat {
	return byLaunch(l, func(l *Line) NullFloat { return l.PublicOnDemandUnused }, null)
}

// Day is the UTC day of line_item_usage_start_date (hourly and daily exports alike; a pod
// running across midnight has lines on both days).
func Day(l *Line) time.Time {
	if l.UsageStart.IsZero() {
		return time.Time{}
	}
	return exporter.Midnight(l.UsageStart)
}

// daySQL: Athena's timestamp has no zone and CUR's are UTC; DuckDB must run with TimeZone
// 'UTC' for a UTC-adjusted Parquet timestamp (TIMESTAMPTZ there) to truncate the same way.
const daySQL = `CAST(date_trunc('day', line_item_usage_start_date) AS DATE)`

// Like is SQL's LIKE without escape: % matches any run, _ any one byte, the rest itself
// (bytes, case sensitive, as Athena and DuckDB compare).
func Like(s, pattern string) bool {
	// Greedy matching with backtracking to the last %, linear in practice.
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '%':
			star, mark = pi, si
			pi++
		case pi < len(pattern) && (pattern[pi] == '_' || pattern[pi] == s[si]):
			si++
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '%' {
		pi++
	}
	return pi == len(pattern)
}

// SplitPart is SQL's split_part(s, sep, n) for n >= 1: "" when there are fewer fields
// (DuckDB; Athena's NULL there is never reached: ParseResourceID checks the shape first).
func SplitPart(s, sep string, n int) string {
	for ; n > 1; n-- {
		var ok bool
		if _, s, ok = strings.Cut(s, sep); !ok {
			return ""
		}
	}
	field, _, _ := strings.Cut(s, sep)
	return field
}
