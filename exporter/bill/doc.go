// Package cur reads the bill: the AWS Cost and Usage Report 2.0 that a
// Data Export writes with split cost allocation data for EKS
// (INCLUDE_SPLIT_COST_ALLOCATION_DATA; Parquet under BILLING_PERIOD=YYYY-MM
// folders), the way AWS's own SCAD containers dashboard reads it, and sums
// it per cluster, namespace and UTC day so it can be set next to Kubecost's
// allocation.
//
// Sources: the CUR 2.0 data dictionary
// (https://docs.aws.amazon.com/cur/latest/userguide/table-dictionary-cur2.html
// and its pages, cited per column in Columns), split cost allocation data
// for EKS (https://docs.aws.amazon.com/cur/latest/userguide/sca-eks.html),
// and the view scad_cca_summary_view of the Cloud Intelligence Dashboards
// (SCADView: repository, path and commit), whose rules are restated here,
// not copied.
//
// The API:
//   - Columns: the CUR 2.0 columns used, with Athena/Glue and Parquet types,
//     meaning and dictionary page; ReadColumns: those the reader decodes.
//   - The rules, each a Go function with its SQL next to it: IsPod (that is,
//     IsPodLine and ParseResourceID), KindOf, SplitCost, UnusedCost, NetSplitCost,
//     NetUnusedCost, PublicOnDemandSplit, PublicOnDemandUnused, Day. Rules
//     lists them with their SQL and citation; SummarySQL sums them per
//     account, region, cluster, namespace and day (SummaryColumns), for
//     Athena views and DuckDB tests.
//   - Read (an export under a prefix of a Reader: any exporter.ObjectStore)
//     and Aggregator.ReadFile (one Parquet file) sum pod lines into a
//     Summary: Costs per Key, by Kind (cpu, memory, gpu) and Measure
//     (split, unused, net split, net unused, public on-demand split and
//     unused), with Stats. Aggregator.Add sums one Line.
//   - Resource-level lines (resource.go, issue 46): ResourceKindOf
//     (instance, volume, data_transfer, load_balancer), AmortizedCost (the
//     Cloud Intelligence Dashboards' summary_view rule, CIDSummaryView),
//     NetAmortizedCost (its net variant, SCADNetAmortized) and PublicCost,
//     each with its SQL (ResourceRules, ResourceDaySQL). The reader sums
//     them in the same pass per resource-day (Summary.Resources) and SCAD's
//     pod lines per parent instance-day (Summary.Parents, ParentsSQL),
//     which exporter/split allocates.
//
// Memory: ReadFile decodes only ReadColumns, batchRows lines at a time,
// skips row groups by the statistics of line_item_usage_start_date when
// days are given, and keeps one string per distinct operation, usage type,
// (cluster, namespace) resource id prefix, and instance, volume or load
// balancer id; the summary holds one entry per key and resource-day.
// Objects from stores without random access (S3) are spooled to a temp
// file, as exporter/report does.
//
// Like for like with Kubecost: split cost + unused cost against Kubecost's
// CPU + RAM + GPU with its idle; SCAD has no PV, network or load balancer
// split, and Fargate has no unused cost. The resource-level lines give
// volumes and data transfer their bill cost (exporter/split).
package bill
