package split

import (
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/bill"
)

// Steps explain one namespace-day (or cluster-day: the sum of its
// namespace-days) in dollars. They add up:
//
//	Kubecost + Pricing + Discounts + Negotiated = SplitBill
//	SplitBill + IdleSpread + SplitWeights = SCAD
//
// Kubecost is Kubecost's cost of the rows the bill prices (price_basis 'bill'); Pricing their
// split at public on-demand less that; Discounts amortized less public on-demand (RIs, Savings
// Plans, Spot); Negotiated net less amortized (EDP, credits). SplitBillAmortized is the split
// at amortized cost. ListPriced is Kubecost's number of rows no bill line prices, not a step.
//
// Where SCAD is on for the cluster-day, IdleSpread moves each node's idle row onto its pods by
// share, as SCAD spreads an instance's unused cost (split_line_item_unused_cost, sca-eks), and
// SplitWeights is the rest of the way to SCAD: its net split + unused cost of the namespace
// plus the split's volumes and data transfer (which SCAD does not split, so both ends hold
// them). Where SCAD is off, both are 0 and SCAD equals SplitBill.
type Steps struct {
	Kubecost, Pricing, Discounts, Negotiated, SplitBill float64
	IdleSpread, SplitWeights, SCAD                      float64
	SplitBillAmortized, ListPriced                      float64
}

// Key is a namespace-day of a cluster.
type Key struct {
	Cluster   Cluster
	Namespace string
	Day       time.Time
}

// ClusterDay is a cluster-day.
type ClusterDay struct {
	Cluster Cluster
	Day     time.Time
}

// SCADNet is SCAD's net split + unused cost per namespace-day, from the bill's pod lines.
type SCADNet map[Key]float64

// On is the cluster-days with SCAD on: those with any key.
func (scad SCADNet) On() map[ClusterDay]bool {
	on := map[ClusterDay]bool{}
	for k := range scad {
		on[ClusterDay{k.Cluster, k.Day}] = true
	}
	return on
}

// NamespaceStepsOn computes the steps per namespace-day of a Splitter's rows, with SCAD's costs
// (nil: none) and the cluster-days where SCAD is on (the whole bill's SCADNet.On). Every step
// is a sum over rows and scad's keys: parts of whole cluster-days, with scad given to one part
// and the same on to all, add up (Steps.Add) to the steps of all the rows.
func NamespaceStepsOn(rows []Row, scad SCADNet, on map[ClusterDay]bool) map[Key]*Steps {
	out := map[Key]*Steps{}
	get := func(k Key) *Steps {
		s := out[k]
		if s == nil {
			s = &Steps{}
			out[k] = s
		}
		return s
	}
	rest := map[Key]float64{} // the split's non-instance bill, held at both ends
	for i := range rows {
		r := &rows[i]
		k := Key{r.Cluster, r.Namespace, r.Day}
		s := get(k)
		if r.PriceBasis != BasisBill {
			s.ListPriced += r.KubecostCost
			continue
		}
		s.Kubecost += r.KubecostCost
		s.Pricing += r.PublicOnDemand.V
		s.SplitBillAmortized += r.Amortized.V
		s.SplitBill += r.Net.V
		if r.Kind != bill.KindInstance {
			rest[k] += r.Net.V
		}
	}
	idleSpread(rows, on, get)
	for k, v := range scad {
		get(k).SCAD += v
	}
	for k, s := range out {
		od, am := s.Pricing, s.SplitBillAmortized
		s.Pricing = od - s.Kubecost
		s.Discounts = am - od
		s.Negotiated = s.SplitBill - am
		if on[ClusterDay{k.Cluster, k.Day}] {
			s.SCAD += rest[k]
			s.SplitWeights = s.SCAD - s.SplitBill - s.IdleSpread
		} else {
			s.SCAD = s.SplitBill
		}
	}
	return out
}

// idleSpread moves each matched instance-day's idle net cost onto the node's other rows by
// share (none without such a row), in get's steps' IdleSpread.
func idleSpread(rows []Row, on map[ClusterDay]bool, get func(Key) *Steps) {
	type inst struct {
		c   Cluster
		day time.Time
		id  string
	}
	matched := func(r *Row) bool {
		return r.Kind == bill.KindInstance && r.PresentIn == Both && on[ClusterDay{r.Cluster, r.Day}]
	}
	idle := map[inst]float64{}
	podShare := map[inst]float64{}
	for i := range rows {
		r := &rows[i]
		if !matched(r) {
			continue
		}
		k := inst{r.Cluster, r.Day, r.ResourceID}
		if r.Idle {
			idle[k] += r.Net.V
		} else {
			podShare[k] += r.Share
		}
	}
	for i := range rows {
		r := &rows[i]
		k := inst{r.Cluster, r.Day, r.ResourceID}
		if !matched(r) || podShare[k] == 0 {
			continue
		}
		s := get(Key{r.Cluster, r.Namespace, r.Day})
		if r.Idle {
			s.IdleSpread -= r.Net.V
		} else {
			s.IdleSpread += idle[k] * r.Share / podShare[k]
		}
	}
}

// Add sums o into s.
func (s *Steps) Add(o *Steps) {
	s.Kubecost += o.Kubecost
	s.Pricing += o.Pricing
	s.Discounts += o.Discounts
	s.Negotiated += o.Negotiated
	s.SplitBill += o.SplitBill
	s.IdleSpread += o.IdleSpread
	s.SplitWeights += o.SplitWeights
	s.SCAD += o.SCAD
	s.SplitBillAmortized += o.SplitBillAmortized
	s.ListPriced += o.ListPriced
}
