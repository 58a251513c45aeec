package curfixture

import (
	"slices"
	"strings"
	"time"
)

// ExpectKey is a cluster's namespace on a UTC day.
type ExpectKey struct {
	ClusterARN, Namespace string
	Day                   time.Time
}

// Kinds index Expect's arrays: cpu, memory, gpu.
var Kinds = [3]string{"cpu", "memory", "gpu"}

// Expect are the sums of one key, per kind (Kinds' order).
type Expect struct {
	Split, Unused, NetSplit, NetUnused, PublicOnDemandSplit, PublicOnDemandUnused [3]float64
	Lines                                                                         int
}

// Expected computes, with plain loops over rows and nothing of
// exporter/bill, what the bill's reader must find: per cluster ARN,
// namespace and UTC day of the start, the pod lines' costs by kind.
//
// The rules, restated from AWS's scad_cca_summary_view
// (aws-solutions-library-samples/cloud-intelligence-dashboards-framework,
// dashboards/scad-containers-cost-allocation, EKS only):
//   - an EKSPod-EC2 line counts unless it has no parent instance and a
//     split cost that is 0 or null; a FargatePod line counts when its usage
//     type ends in Fargate-vCPU-Hours:perCPU or Fargate-GB-Hours and its
//     type is Usage or SavingsPlanCoveredUsage; its resource id must be
//     arn:<partition>:eks:<region>:<account>:pod/<cluster>/<ns>/<pod>/...;
//   - the kind is the usage type's ending;
//   - EC2: cost = split cost, unused = unused cost, net = the net column
//     when it is above 0, the gross one when it is 0 or null, 0 when it
//     is below 0; public on-demand = the split line's public columns;
//   - Fargate: cost = SP effective cost when SavingsPlanCoveredUsage, else
//     unblended; net = (covered ? net SP effective : net unblended) when
//     the net unblended cost is above 0, cost when it is 0 or null, 0 when
//     below; public on-demand = pricing_public_on_demand_cost (unblended
//     for a Spot usage type); no unused cost;
//   - a null adds nothing.
func Expected(rows []Row) map[ExpectKey]*Expect {
	out := map[ExpectKey]*Expect{}
	for i := range rows {
		r := &rows[i]
		s := func(name, v string) string {
			if slices.Contains(r.NullStrings, name) {
				return ""
			}
			return v
		}
		op, ut, typ := s("line_item_operation", r.Operation), s("line_item_usage_type", r.UsageType), s("line_item_line_item_type", r.LineItemType)
		parent, id := s("split_line_item_parent_resource_id", r.ParentResourceID), s("line_item_resource_id", r.ResourceID)
		if r.Start.IsZero() {
			continue
		}
		ec2 := op == "EKSPod-EC2" && !(parent == "" && (r.SplitCost == nil || *r.SplitCost == 0))
		fargate := op == "FargatePod" &&
			(strings.HasSuffix(ut, "Fargate-vCPU-Hours:perCPU") || strings.HasSuffix(ut, "Fargate-GB-Hours")) &&
			(typ == "Usage" || typ == "SavingsPlanCoveredUsage")
		if !ec2 && !fargate {
			continue
		}
		parts := strings.Split(id, "/")
		if len(parts) < 4 {
			continue
		}
		arn := strings.Split(parts[0], ":")
		if len(arn) != 6 || arn[0] != "arn" || arn[2] != "eks" || arn[5] != "pod" {
			continue
		}
		kind := -1
		for k, suffix := range map[int][]string{0: {"EKS-EC2-vCPU-Hours", "Fargate-vCPU-Hours:perCPU"}, 1: {"EKS-EC2-GB-Hours", "Fargate-GB-Hours"}, 2: {"EKS-EC2-Accelerator-Hours"}} {
			for j, sfx := range suffix {
				// The EC2 endings apply to EC2 lines, the Fargate ones to Fargate.
				if strings.HasSuffix(ut, sfx) && (j == 0) == ec2 {
					kind = k
				}
			}
		}
		if kind < 0 {
			continue
		}
		u := r.Start.UTC()
		key := ExpectKey{
			ClusterARN: "arn:" + arn[1] + ":eks:" + arn[3] + ":" + arn[4] + ":cluster/" + parts[1],
			Namespace:  parts[2],
			Day:        time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC),
		}
		e := out[key]
		if e == nil {
			e = &Expect{}
			out[key] = e
		}
		e.Lines++
		e.add(r, kind, ec2, typ, ut)
	}
	return out
}

// add sums one pod line of the kind (0 cpu, 1 memory, 2 gpu) into e.
func (e *Expect) add(r *Row, kind int, ec2 bool, typ, ut string) {
	plus := func(sum *[3]float64, v *float64) {
		if v != nil {
			sum[kind] += *v
		}
	}
	net := func(netV, gross *float64) *float64 {
		switch {
		case netV == nil || *netV == 0:
			return gross
		case *netV > 0:
			return netV
		}
		zero := 0.0
		return &zero
	}
	if ec2 {
		plus(&e.Split, r.SplitCost)
		plus(&e.Unused, r.UnusedCost)
		plus(&e.NetSplit, net(r.NetSplit, r.SplitCost))
		plus(&e.NetUnused, net(r.NetUnused, r.UnusedCost))
		plus(&e.PublicOnDemandSplit, r.PODSplit)
		plus(&e.PublicOnDemandUnused, r.PODUnused)
		return
	}
	cost, netCost := r.Unblended, r.NetUnblended
	if typ == "SavingsPlanCoveredUsage" {
		cost = r.SPEffective
		if r.NetUnblended != nil && *r.NetUnblended > 0 {
			netCost = r.SPNetEffective
		}
	}
	plus(&e.Split, cost)
	if r.NetUnblended == nil || *r.NetUnblended <= 0 {
		plus(&e.NetSplit, net(r.NetUnblended, cost))
	} else {
		plus(&e.NetSplit, netCost)
	}
	if strings.Contains(ut, "Spot") {
		plus(&e.PublicOnDemandSplit, r.Unblended)
	} else {
		plus(&e.PublicOnDemandSplit, r.PublicOnDemand)
	}
}
