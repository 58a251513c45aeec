package kubecostsim

import (
	"net/url"
	"strings"
)

// staleAnswers copies kubecost/kubecost#4508 (Kubecost 3.x, chart 3.0.4,
// closed without a fix): /model/allocation "sometimes maintains the
// aggregation from a previous, different query", and filters "stick". The
// answer is well-formed and has status 200; only its rows are of another
// query: answered with the availability query's aggregate=cluster, a
// container-level day comes back as one row per cluster plus idle.
type staleAnswers struct {
	left int        // container-level queries still to answer stale
	prev url.Values // the last query answered as asked
}

// staleParams are the parameters that "stick" in #4508: the aggregation
// and the filter. The window, step and idle parameters are the new
// query's, so only the shape of the rows betrays the stale answer.
var staleParams = []string{"aggregate", "filter", "filterClusters"}

// SetStaleAnswers makes the next n allocation queries that aggregate by
// container be answered with the aggregation and filter of the last query
// answered as asked (in an export, the availability query's
// aggregate=cluster), as kubecost/kubecost#4508 reports. Queries of
// another aggregation are answered as asked and become the "previous"
// query. 0 stops the quirk.
func (s *Sim) SetStaleAnswers(n int) {
	s.mu.Lock()
	s.stale.left = max(n, 0)
	s.mu.Unlock()
}

// StaleAnswersLeft is how many stale answers SetStaleAnswers has left.
func (s *Sim) StaleAnswersLeft() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stale.left
}

// answerFor returns the query the Sim answers for v (staleAnswers.answer).
func (s *Sim) answerFor(v url.Values) url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stale.answer(v)
}

// SetStaleAnswers is Sim.SetStaleAnswers for a federated primary: the
// stale answer keeps the previous query's filter too, so a cluster-day
// asked after the availability query comes back unfiltered, with one row
// per cluster.
func (f *Fleet) SetStaleAnswers(n int) {
	f.mu.Lock()
	f.stale.left = max(n, 0)
	f.mu.Unlock()
}

// StaleAnswersLeft is how many stale answers SetStaleAnswers has left.
func (f *Fleet) StaleAnswersLeft() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stale.left
}

func (f *Fleet) answerFor(v url.Values) url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stale.answer(v)
}

// answer returns v itself, or, while stale answers are left and v
// aggregates by container, v with the previous query's sticky parameters.
// The caller holds the server's lock.
func (st *staleAnswers) answer(v url.Values) url.Values {
	if st.left > 0 && st.prev != nil && isContainerQuery(v) && st.prev.Get("aggregate") != v.Get("aggregate") {
		st.left--
		out := url.Values{}
		for k, vs := range v {
			out[k] = vs
		}
		for _, k := range staleParams {
			if p, ok := st.prev[k]; ok {
				out[k] = p
			} else {
				delete(out, k)
			}
		}
		return out
	}
	st.prev = v
	return v
}

func isContainerQuery(v url.Values) bool {
	for _, a := range strings.Split(v.Get("aggregate"), ",") {
		if strings.TrimSpace(a) == "container" {
			return true
		}
	}
	return false
}
