// Package split is Kubecost's split of the bill (issue 46): the bill's own
// cost of each EC2 instance, EBS volume and instance data transfer that a
// cluster's Kubecost allocations name, given to those allocations by
// Kubecost's shares, and the waterfall that explains, in dollars, how
// Kubecost's own number becomes the bill's.
//
// It is pure: no I/O. Inputs are Kubecost's allocation rows of a day
// (Alloc: a pod on a node, or the node's idle row), the bill's
// resource-day costs and SCAD's pod lines per parent instance
// (exporter/bill's Summary), and optionally SCAD's per-namespace costs.
// Outputs are the allocated rows (Row, one per row of the Athena view
// <prefix>_split_daily) and the steps (Steps) per namespace-day. The views
// of terraform/internal/gen compute the same, and tests hold them equal.
//
// The rules:
//   - Instances. A node-day whose providerID is an EC2 instance
//     (aws:///<zone>/i-... or i-...) takes the bill's cost of that
//     instance on that UTC day (bill.ResourceKindOf "instance", summed by
//     bill.AmortizedCost, bill.NetAmortizedCost, bill.PublicCost). Each of
//     the node's rows, the idle row included, gets its share of it: its
//     CPU + RAM + GPU cost with adjustments over the node's (equal shares
//     when the node's total is 0, so the cost is never lost).
//   - Volumes. A volume (the providerID of an entry of an allocation's
//     pvs, vol-... or aws://<zone>/vol-...) takes its EBS lines' cost,
//     shared by the allocations' PV cost with adjustment.
//   - Data transfer. An instance's own data-transfer lines go to the
//     node's rows by their network cost (by the compute shares when the
//     node has none).
//   - Load balancers: Kubecost's number, list-priced (the bill's load
//     balancer lines are not matched to services yet).
//   - Unmatched rows are kept and marked: kubecost_only (no bill line; the
//     costs are null and Kubecost's number is list_priced), bill_only (an
//     instance that SCAD's pod lines of the cluster name as
//     split_line_item_parent_resource_id, sca-eks, but no Kubecost node
//     does; namespace __unallocated__).
package split
