package report

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

// Bill is where the report reads the bill: a CUR 2.0 Data Export with
// split cost allocation data, read by exporter/bill with AWS's SCAD rules.
type Bill struct {
	Store  Reader // the export's bucket or directory (destination.Open)
	Prefix string // where its BILLING_PERIOD= folders are found, "" or ending in /
	Source string // the location as the user gave it, for the page
}

// readBill sums the export's pod lines over the report's days and
// clusters into the comparison's keys.
func readBill(ctx context.Context, o Options, from, to time.Time) (map[CompareKey]*BillCost, *bill.Summary, error) {
	sum, err := bill.Read(ctx, bill.Options{Store: o.Bill.Store, Prefix: o.Bill.Prefix, From: from, To: to,
		TempDir: o.TempDir, Logger: o.Logger})
	if err != nil {
		return nil, nil, fmt.Errorf("report: the bill at %s: %w", o.Bill.Source, err)
	}
	out := map[CompareKey]*BillCost{}
	for key, c := range sum.Rows {
		ref := ClusterRef{Account: key.Account, Region: key.Region, Name: key.Cluster}
		if !o.billInScope(ref) {
			continue
		}
		k := CompareKey{Cluster: ref, Namespace: key.Namespace, Day: key.Day}
		b := out[k]
		if b == nil {
			b = &BillCost{}
			out[k] = b
		}
		b.merge(BillCost{Split: c.Total(bill.MSplit), Unused: c.Total(bill.MUnused),
			NetSplit: c.Total(bill.MNetSplit), NetUnused: c.Total(bill.MNetUnused),
			PublicOnDemand: c.Total(bill.MPublicOnDemandSplit) + c.Total(bill.MPublicOnDemandUnused), Lines: c.Lines})
	}
	return out, sum, nil
}

// billInScope: the bill's clusters the report covers. With -cluster or a
// run's clusters, those; else every cluster of the bill, so that a cluster
// the archive lacks shows as the bill's only.
func (o Options) billInScope(c ClusterRef) bool {
	if len(o.Clusters) > 0 && !slices.Contains(o.Clusters, c.Name) {
		return false
	}
	return o.inScope(File{Account: c.Account, Region: c.Region, Cluster: c.Name})
}

// compareWithBill reads the bill over d's days and joins it with
// Kubecost's side that the aggregator collected, and with Kubecost's split
// of the bill over the archive's files.
func compareWithBill(ctx context.Context, o Options, d *Data, kube map[CompareKey]*KubecostCost, files []File) error {
	if d.From.IsZero() {
		return nil // no day to compare
	}
	from, to := billRange(o, d.From, d.To)
	billed, sum, err := readBill(ctx, o, from, to)
	if err != nil {
		return err
	}
	steps, err := splitSteps(ctx, o, files, sum)
	if err != nil {
		return err
	}
	st := sum.Stats
	outside := splitOutside(billed, d.From, d.To)
	for k := range steps { // the bill's days outside the range are named apart, not compared
		if k.Day.Before(d.From) || k.Day.After(d.To) {
			delete(steps, k)
		}
	}
	d.Bill = &Comparison{Source: o.Bill.Source, Files: int64(st.Files), Lines: st.PodLines,
		RowGroups: int64(st.RowGroups), Skipped: int64(st.RowGroupsSkipped),
		Clusters: compareSides(kube, billed, steps),
		From:     d.From, To: d.To, Outside: outside, ReadFrom: from, ReadTo: to}
	d.Bill.Waterfalls = waterfallsOf(d.Bill.Clusters)
	if o.Logger != nil {
		o.Logger.Debug("bill read", "source", o.Bill.Source, "files", st.Files, "lines", st.Lines, "pod_lines", st.PodLines,
			"row_groups", st.RowGroups, "skipped", st.RowGroupsSkipped)
	}
	return nil
}
