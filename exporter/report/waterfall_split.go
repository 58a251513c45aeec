package report

// waterfallsOf is the page's waterfall of the comparison's rows: each
// namespace's steps over the days (CompareRow.Steps, exporter/split's),
// summed per cluster. SCAD is on for a namespace whose steps move past
// the split of the bill (exporter/split sets SCAD = SplitBill where it is
// off, with IdleSpread and SplitWeights 0).
func waterfallsOf(cs []ClusterComparison) []ClusterWaterfall {
	byDay := map[CompareKey]Waterfall{}
	for _, c := range cs {
		for _, r := range c.Daily {
			s := r.Steps
			byDay[r.CompareKey] = Waterfall{Kubecost: s.Kubecost, Pricing: s.Pricing, Discounts: s.Discounts,
				Negotiated: s.Negotiated, SplitBill: s.SplitBill, IdleSpread: s.IdleSpread, SplitWeights: s.SplitWeights,
				SCAD: s.SCAD, ListPriced: s.ListPriced, SCADOn: s.IdleSpread != 0 || s.SplitWeights != 0 || s.SCAD != s.SplitBill}
		}
	}
	return Waterfalls(byDay)
}
