package bill

import "time"

// Key is one row of the summary: a cluster's namespace on a UTC day. The cluster is its ARN
// (the archive's CLUSTER_ID) and the parts of it; two accounts' "prod" are two keys.
type Key struct {
	ClusterARN, Account, Region, Cluster string
	Namespace                            string
	Day                                  time.Time
}

// Costs are the sums of one key per kind and measure, and the lines summed.
type Costs struct {
	ByKind [NumKinds][NumMeasures]float64
	Lines  int64
}

// Total is a measure summed over the kinds.
func (c *Costs) Total(m Measure) float64 {
	var t float64
	for k := range Kind(NumKinds) {
		t += c.ByKind[k][m]
	}
	return t
}

// Summary is the aggregate of a CUR export's pod lines.
type Summary struct {
	Rows  map[Key]*Costs
	Stats Stats
	// Resources (resource-level lines per resource-day) and Parents (SCAD's pod lines per
	// parent instance-day): resource_aggregate.go; nil when there are none.
	Resources map[ResourceKey]*ResourceCost
	Parents   map[ParentKey]*ParentCost
}

// Stats says what reading took.
type Stats struct {
	Files              int   // Parquet objects read
	RowGroups          int   // row groups in them
	RowGroupsSkipped   int   // of which skipped by their date statistics
	Lines              int64 // lines decoded
	PodLines           int64 // of which summed
	ResourceLines      int64 // of which resource-level lines summed (resource.go)
	BytesSpooled       int64 // bytes copied to temp files (stores without random access)
	RowGroupsUndecided int   // row groups without date statistics (read)
}

// Aggregator sums lines into a Summary, in memory bounded by the distinct keys and (cluster,
// namespace) id prefixes, whatever the number of lines.
type Aggregator struct {
	sum      Summary
	pods     map[string]*podSlot // by resource id (the reader passes a prefix)
	from, to time.Time           // inclusive UTC days, zero is open
	strs     map[string]string   // ReadFile's interned strings
	batch    *batch              // ReadFile's decoding buffers
}

type podSlot struct {
	pod Pod
	ok  bool
	// The last day summed for this id: a pod's lines come hour after hour, so the key's map
	// lookup is mostly skipped.
	day   time.Time
	costs *Costs
}

// NewAggregator sums lines of the UTC days from..to (inclusive; a zero
// bound is open).
func NewAggregator(from, to time.Time) *Aggregator {
	return &Aggregator{sum: Summary{Rows: map[Key]*Costs{}}, pods: map[string]*podSlot{}, strs: map[string]string{}, from: from, to: to}
}

// Add sums a pod line of a kind within the days, an EC2 one with a parent also into
// Summary.Parents; it reports whether it did.
func (a *Aggregator) Add(l *Line) bool {
	if !IsPodLine(l) {
		return false
	}
	slot := a.pods[l.ResourceID]
	if slot == nil {
		slot = &podSlot{}
		slot.pod, slot.ok = ParseResourceID(l.ResourceID)
		a.pods[l.ResourceID] = slot
	}
	kind := KindOf(l)
	if !slot.ok || kind == NoKind {
		return false
	}
	day := Day(l)
	if !a.inDays(day) {
		return false
	}
	c := slot.costs
	if c == nil || !slot.day.Equal(day) {
		p := &slot.pod
		c = entry(&a.sum.Rows, Key{ClusterARN: p.ClusterARN, Account: p.Account, Region: p.Region, Cluster: p.Cluster, Namespace: p.Namespace, Day: day})
		slot.day, slot.costs = day, c
	}
	for m, f := range measureFuncs {
		if v := f(l); v.Valid {
			c.ByKind[kind][m] += v.V
		}
	}
	c.Lines++
	a.sum.Stats.PodLines++
	if l.Operation == OpEKSPodEC2 && l.ParentResourceID != "" {
		a.addParent(l, &slot.pod, day)
	}
	return true
}

// Summary returns what was added so far.
func (a *Aggregator) Summary() *Summary { return &a.sum }

func (a *Aggregator) inDays(day time.Time) bool {
	return (a.from.IsZero() || !day.Before(a.from)) && (a.to.IsZero() || !day.After(a.to))
}

// entry returns (*m)[k], adding a zero entry (and the map) when there is none.
func entry[K comparable, V any](m *map[K]*V, k K) *V {
	if *m == nil {
		*m = map[K]*V{}
	}
	v := (*m)[k]
	if v == nil {
		v = new(V)
		(*m)[k] = v
	}
	return v
}
