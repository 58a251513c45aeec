package report

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

// Bill is where the report reads the bill: a CUR 2.0 Data Export with SCAD (exporter/bill).
type Bill struct {
	Store  Reader // the export's bucket or directory (destination.Open)
	Prefix string // where its BILLING_PERIOD= folders are found, "" or ending in /
	Source string // the location as the user gave it, for the page
}

// readBill sums the export's pod lines of the report's days and clusters per comparison key.
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
		entry(out, k).merge(BillCost{Split: c.Total(bill.MSplit), Unused: c.Total(bill.MUnused),
			NetSplit: c.Total(bill.MNetSplit), NetUnused: c.Total(bill.MNetUnused),
			PublicOnDemand: c.Total(bill.MPublicOnDemandSplit) + c.Total(bill.MPublicOnDemandUnused), Lines: c.Lines})
	}
	return out, sum, nil
}

// billInScope: the bill's clusters covered: those of -cluster or a run, else all (so a cluster
// the archive lacks shows as the bill's only).
func (o Options) billInScope(c ClusterRef) bool {
	if len(o.Clusters) > 0 && !slices.Contains(o.Clusters, c.Name) {
		return false
	}
	return o.inScope(File{Account: c.Account, Region: c.Region, Cluster: c.Name})
}

// compareWithBill reads the bill over d's days and joins it with Kubecost's side and split.
func compareWithBill(ctx context.Context, o Options, d *Data, files []File) error {
	if d.From.IsZero() {
		return nil // no day to compare
	}
	from, to := billRange(o, d.From, d.To)
	billed, sum, err := readBill(ctx, o, from, to)
	if err != nil {
		return err
	}
	steps, kube, err := splitSteps(ctx, o, files, sum)
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

// The bill's days the page's range leaves out. Without -from and -to the range is the
// archive's days, but an invoice is a month, and a reader reconciling with it needs to know
// what the section does not show. So for a range end not given the bill is read over the whole
// billing period (UTC month); rows outside the range are summed per cluster and named on the
// page and in the text, with the flags that include them (as "bill only" rows).

// OutsideDays is what of one cluster's bill lies outside the range.
type OutsideDays struct {
	Cluster   ClusterRef
	From, To  time.Time // the first and last such day
	Days      int
	Bill      BillCost
	dayOfRows map[time.Time]bool
}

// billRange is the days the bill is read over: the range's ends where given, else that end's
// billing period's first or last day.
func billRange(o Options, from, to time.Time) (time.Time, time.Time) {
	if o.From.IsZero() {
		from = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	if o.To.IsZero() {
		to = time.Date(to.Year(), to.Month()+1, 0, 0, 0, 0, 0, time.UTC)
	}
	return from, to
}

// splitOutside removes bill's rows outside [from, to] and sums them per cluster, sorted.
func splitOutside(bill map[CompareKey]*BillCost, from, to time.Time) []OutsideDays {
	byCluster := map[ClusterRef]*OutsideDays{}
	for k, v := range bill {
		if !k.Day.Before(from) && !k.Day.After(to) {
			continue
		}
		delete(bill, k)
		o := byCluster[k.Cluster]
		if o == nil {
			o = &OutsideDays{Cluster: k.Cluster, From: k.Day, To: k.Day, dayOfRows: map[time.Time]bool{}}
			byCluster[k.Cluster] = o
		}
		o.Bill.merge(*v)
		o.dayOfRows[k.Day] = true
		if k.Day.Before(o.From) {
			o.From = k.Day
		}
		if k.Day.After(o.To) {
			o.To = k.Day
		}
	}
	out := make([]OutsideDays, 0, len(byCluster))
	for _, o := range byCluster {
		o.Days, o.dayOfRows = len(o.dayOfRows), nil
		out = append(out, *o)
	}
	slices.SortFunc(out, func(a, b OutsideDays) int { return a.Cluster.compare(b.Cluster) })
	return out
}
