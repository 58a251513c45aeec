package report

import (
	"slices"
	"time"
)

// The bill's days the page's range leaves out. Without -from and -to the
// range is the archive's days, but an invoice is a month: a FinOps reader
// reconciling with it needs to know what of the bill's months the section
// does not show. So the bill is read over the whole billing periods
// (calendar months, UTC) of a range end that was not given, the rows
// inside the range are compared, and those outside are summed per cluster
// and named on the page and in the text: what they cost, and the flags
// that include them (as "bill only" rows, Kubecost having no day file).

// OutsideDays is what of one cluster's bill lies outside the range.
type OutsideDays struct {
	Cluster   ClusterRef
	From, To  time.Time // the first and last such day
	Days      int
	Bill      BillCost
	dayOfRows map[time.Time]bool
}

// billRange is the days the bill is read over: the range's own ends where
// given, else the first or last day of that end's billing period.
func billRange(o Options, from, to time.Time) (time.Time, time.Time) {
	if o.From.IsZero() {
		from = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	if o.To.IsZero() {
		to = time.Date(to.Year(), to.Month()+1, 0, 0, 0, 0, 0, time.UTC)
	}
	return from, to
}

// splitOutside removes from bill the rows outside [from, to] and sums
// them per cluster, sorted as the section's clusters.
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
