package kubecostsim

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// Truth is what a correct client must find in a response, computed by the
// same generator that renders the JSON but without going through JSON.
type Truth struct {
	Start, End time.Time
	Null       bool // TruthFor: the set is null (or {} with EmptySets)
	Sets       int  // non-null sets
	Count      int  // allocations
	TotalCost  float64
	// ByNamespace sums totalCost by the allocation's namespace property: ""
	// for idle and for aggregations without a namespace.
	ByNamespace map[string]float64
}

type truthSink struct {
	q    *query
	sets []Truth
}

func (t *truthSink) beginSet(w setWindow) error {
	t.sets = append(t.sets, Truth{Start: time.Unix(w.start*3600, 0).UTC(), End: time.Unix(w.end*3600, 0).UTC(),
		Null: w.null, ByNamespace: map[string]float64{}})
	if !w.null {
		t.sets[len(t.sets)-1].Sets = 1
	}
	return nil
}

func (t *truthSink) alloc(_ []byte, m *member, a *acc) error {
	cur := &t.sets[len(t.sets)-1]
	ns := ""
	if m.sl != nil && (t.q.podLevel() || t.q.mask.has(fNamespace)) {
		ns = m.sl.ctrl.ns.name
	}
	total := a.totalCost()
	cur.Count++
	cur.TotalCost += total
	cur.ByNamespace[ns] += total
	return nil
}

func (t *truthSink) endSet() error { return nil }

// TruthFor returns the truth of each set the query q would return, in order.
func (s *Sim) TruthFor(q url.Values) ([]Truth, error) {
	return s.truthFor(q, false)
}

// truthFor is TruthFor; filtered applies the core's idle filtration
// coefficients of a query filtered to this cluster (realcore.go).
func (s *Sim) truthFor(q url.Values, filtered bool) ([]Truth, error) {
	pq, err := parseQuery(q, s.cfg.Flavor)
	if err != nil {
		return nil, err
	}
	t := &truthSink{q: pq}
	e := s.newEngine(pq, t)
	e.filtered = filtered
	if err := e.run(context.Background(), s.windows(pq)); err != nil {
		return nil, err
	}
	return t.sets, nil
}

// Truth sums the sets of one UTC day queried with the given step (time.Hour
// or 24*time.Hour) and aggregate parameter ("" means namespace, as in
// Kubecost), accumulate=false, no idle: what one exported file must contain.
// An unavailable day has Sets == 0 and Count == 0.
func (s *Sim) Truth(day time.Time, step time.Duration, aggregate string) (Truth, error) {
	day = day.UTC()
	if !day.Equal(day.Truncate(24 * time.Hour)) {
		return Truth{}, fmt.Errorf("kubecostsim: day %s is not a UTC midnight", day.Format(time.RFC3339))
	}
	end := day.Add(24 * time.Hour)
	v := url.Values{
		"window":     {day.Format(time.RFC3339) + "," + end.Format(time.RFC3339)},
		"step":       {step.String()},
		"aggregate":  {aggregate},
		"accumulate": {"false"},
		"idle":       {"false"}, // Kubecost's default is true
	}
	sets, err := s.TruthFor(v)
	if err != nil {
		return Truth{}, err
	}
	out := Truth{Start: day, End: end, ByNamespace: map[string]float64{}}
	for _, t := range sets {
		out.Sets += t.Sets
		out.Count += t.Count
		out.TotalCost += t.TotalCost
		for k, v := range t.ByNamespace {
			out.ByNamespace[k] += v
		}
	}
	out.Null = out.Sets == 0
	return out, nil
}
