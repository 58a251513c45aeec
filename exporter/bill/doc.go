// Package cur reads the bill: the AWS Cost and Usage Report 2.0 that a Data Export writes
// with split cost allocation data for EKS (INCLUDE_SPLIT_COST_ALLOCATION_DATA; Parquet under
// BILLING_PERIOD=YYYY-MM folders), the way AWS's own SCAD containers dashboard reads it, and
// sums it per cluster, namespace and UTC day to set next to Kubecost's allocation.
//
// Sources: the CUR 2.0 data dictionary
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2.html and its pages,
// cited per column in Columns), split cost allocation data for EKS
// (https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html), and the Cloud Intelligence
// Dashboards' view scad_cca_summary_view (SCADView), whose rules are restated, not copied.
//
// The API:
//   - Columns: the CUR 2.0 columns used (types, meaning, dictionary page); ReadColumns: those
//     the reader decodes.
//   - The rules, each a Go function with its SQL next to it: IsPod (IsPodLine and
//     ParseResourceID), KindOf, SplitCost, UnusedCost, NetSplitCost, NetUnusedCost,
//     PublicOnDemandSplit, PublicOnDemandUnused, Day. Rules lists them with SQL and citation;
//     SummarySQL sums them per account, region, cluster, namespace and day (SummaryColumns).
//   - Read (an export under a prefix of any exporter.ObjectStore) and Aggregator.ReadFile (one
//     Parquet file) sum pod lines into a Summary: Costs per Key, by Kind and Measure, with
//     Stats. Aggregator.Add sums one Line.
//   - Resource-level lines (resource.go, issue 46): ResourceKindOf, AmortizedCost (the Cloud
//     Intelligence Dashboards' summary_view rule, CIDSummaryView), NetAmortizedCost
//     (SCADNetAmortized) and PublicCost, with their SQL (ResourceRules, ResourceDaySQL). The
//     reader sums them in the same pass per resource-day (Summary.Resources), and SCAD's pod
//     lines per parent instance-day (Summary.Parents, ParentsSQL), which exporter/split
//     allocates.
//
// Memory: ReadFile decodes only ReadColumns, batchRows lines at a time, skips row groups by
// line_item_usage_start_date statistics when days are given, and interns operations, usage
// types, (cluster, namespace) id prefixes and resource ids; the summary holds one entry per
// key and resource-day. Objects from stores without random access (S3) are spooled to a temp
// file, as exporter/report does.
//
// Like for like with Kubecost: split + unused cost against Kubecost's CPU + RAM + GPU with its
// idle; SCAD has no PV, network or load balancer split, and Fargate has no unused cost. The
// resource-level lines give volumes and data transfer their bill cost (exporter/split).
package bill
