// Package split is Kubecost's split of the bill (issue 46): the bill's own cost of each EC2
// instance, EBS volume and instance data transfer that a cluster's Kubecost allocations name,
// given to them by Kubecost's shares, and the waterfall that explains, in dollars, how
// Kubecost's number becomes the bill's.
//
// It is pure (no I/O). Inputs: Kubecost's allocation rows of a day (Alloc), the bill's
// resource-day costs and SCAD's pod lines per parent instance (exporter/bill's Summary), and
// optionally SCAD's per-namespace costs. Outputs: the rows of the Athena view
// <prefix>_split_daily (Row) and the Steps per namespace-day. terraform/internal/gen's views
// compute the same, and tests hold them equal.
//
// The rules:
//   - Instances. A node-day whose providerID is an EC2 instance takes that instance-day's bill
//     cost (bill.ResourceKindOf "instance"; bill.AmortizedCost, NetAmortizedCost, PublicCost).
//     Each of the node's rows, idle included, gets its share: its CPU + RAM + GPU cost with
//     adjustments over the node's (equal shares when that is 0, so no cost is lost).
//   - Volumes. A volume (a pvs entry's providerID) takes its EBS lines' cost, shared by the
//     allocations' PV cost with adjustment.
//   - Data transfer. An instance's data-transfer lines go to the node's rows by network cost
//     (by the compute shares when the node has none).
//   - Load balancers: Kubecost's number, list-priced (their bill lines are not matched to
//     services yet).
//   - Unmatched rows are kept and marked: kubecost_only (no bill line; costs null, Kubecost's
//     number list_priced), bill_only (an instance that the cluster's SCAD pod lines name as
//     split_line_item_parent_resource_id, sca-eks, but no Kubecost node does; namespace
//     __unallocated__).
package split
