package kubecostsim

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ParamError is a bad query parameter; the server answers it with HTTP 400.
type ParamError struct {
	Param, Value, Reason string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Param, e.Value, e.Reason)
}

type field uint8

const (
	fCluster field = iota
	fNode
	fNamespace
	fPod
	fContainer
	fController
	fControllerKind
)

func fieldNames() []string {
	return []string{"cluster", "node", "namespace", "pod", "container", "controller", "controllerKind"}
}

type fieldMask uint8

func (m fieldMask) has(f field) bool { return m&(1<<f) != 0 }

// query is a parsed Allocation API request. Times are in hours since the epoch:
// the simulator works at hour granularity.
type query struct {
	start, end   int64
	step         int64 // hours; 0 = one set for the whole window
	agg          []field
	mask         fieldMask
	idle         bool
	splitIdle    bool
	idleByNode   bool
	shareTenancy bool
}

// podLevel: the aggregation names one pod, so every pod property is known.
func (q *query) podLevel() bool { return q.mask.has(fNamespace) && q.mask.has(fPod) }

// Flavor is the simulated server.
type Flavor string

const (
	// FlavorKubecost is Kubecost: /model/allocation on the frontend and
	// /allocation on the cost-model container, with Kubecost's parameters
	// idle (default true), splitIdle, idleByNode and shareTenancyCosts.
	FlavorKubecost Flavor = "kubecost"
	// FlavorOpenCost is OpenCost: /allocation/compute (and /allocation on
	// its own API port), whose handler reads includeIdle (default false)
	// and idleByNode, has no split-idle option (every idle allocation ends
	// up in one "__idle__" per set), no tenancy cost sharing, and ignores
	// Kubecost's parameter names.
	FlavorOpenCost Flavor = "opencost"
)

// Paths returns the Allocation API paths the flavour serves.
func (f Flavor) Paths() []string {
	if f == FlavorOpenCost {
		return []string{"/allocation/compute", "/allocation"}
	}
	return []string{"/model/allocation", "/allocation"}
}

func parseQuery(v url.Values, f Flavor) (*query, error) {
	q := &query{}
	w := v.Get("window")
	if w == "" {
		return nil, &ParamError{"window", w, "missing window"}
	}
	var err error
	if q.start, q.end, err = parseWindow(w); err != nil {
		return nil, err
	}
	aggs := v.Get("aggregate")
	if aggs == "" {
		aggs = "namespace" // Kubecost 2.x default
		if f == FlavorOpenCost {
			// OpenCost does not aggregate: one allocation per container.
			aggs = "cluster,node,namespace,pod,container"
		}
	}
	names := fieldNames()
	for _, a := range strings.Split(aggs, ",") {
		a = strings.TrimSpace(a)
		i := indexFold(names, a)
		if i < 0 {
			return nil, &ParamError{"aggregate", aggs, "unsupported aggregation " + strconv.Quote(a) +
				" (supported: " + strings.Join(names, ", ") + ")"}
		}
		if f := field(i); !q.mask.has(f) {
			q.mask |= 1 << f
			q.agg = append(q.agg, f)
		}
	}
	acc, err := boolParam(v, "accumulate", false)
	if err != nil {
		return nil, err
	}
	if s := v.Get("step"); s != "" && !acc {
		d, err := parseDuration(s)
		if err != nil || d < time.Hour || d%time.Hour != 0 {
			return nil, &ParamError{"step", s, "want a whole number of hours, e.g. 1h, 60m, 24h, 1d"}
		}
		q.step = int64(d / time.Hour)
	}
	if err := q.idleParams(v, f); err != nil {
		return nil, err
	}
	if q.step > 0 && (q.end-q.start)/q.step > 100000 {
		return nil, &ParamError{"step", v.Get("step"), "too many sets for this window"}
	}
	return q, nil
}

func indexFold(xs []string, s string) int {
	for i, x := range xs {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}

func boolParam(v url.Values, name string, def bool) (bool, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, &ParamError{name, s, "want true or false"}
	}
	return b, nil
}

// parseDuration accepts Go durations plus Kubecost's "d" suffix.
func parseDuration(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// parseWindow accepts "RFC3339,RFC3339" or "unixSeconds,unixSeconds".
func parseWindow(w string) (start, end int64, err error) {
	bad := func(reason string) (int64, int64, error) {
		return 0, 0, &ParamError{"window", w, reason}
	}
	a, b, ok := strings.Cut(w, ",")
	if !ok {
		return bad("want start,end as RFC3339 or unix seconds")
	}
	var ts [2]time.Time
	for i, s := range [2]string{a, b} {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			ts[i] = time.Unix(n, 0)
		} else if ts[i], err = time.Parse(time.RFC3339, s); err != nil {
			return bad("cannot parse " + strconv.Quote(s) + " as RFC3339 or unix seconds")
		}
	}
	if !ts[0].Before(ts[1]) {
		return bad("start must be before end")
	}
	if ts[0].Unix()%3600 != 0 || ts[1].Unix()%3600 != 0 || ts[0].Nanosecond() != 0 || ts[1].Nanosecond() != 0 {
		return bad("the simulator needs window bounds on whole hours")
	}
	if ts[1].Sub(ts[0]) > 400*24*time.Hour {
		return bad("window longer than 400 days")
	}
	return ts[0].Unix() / 3600, ts[1].Unix() / 3600, nil
}

// setWindow is one set of the response, in hours; null when unavailable.
type setWindow struct {
	start, end int64
	null       bool
}

// windows lists the response's sets. Stepped sets are all or nothing; a
// single accumulated set is clipped to the data that exists, as Kubecost does.
func (s *Sim) windows(q *query) []setWindow {
	now := s.cfg.Now()
	lastHour := floorDiv(now.Unix(), 3600) // sets must end by the last whole hour
	oldest := floorDiv(now.Unix(), 86400)*24 - int64(s.cfg.RetentionDays)*24
	oldestFor := func(hours int64) int64 {
		if hours < 24 && s.cfg.HourlyRetentionHours > 0 {
			return max(oldest, lastHour-int64(s.cfg.HourlyRetentionHours))
		}
		return oldest
	}
	if q.step == 0 {
		a := max(q.start, oldestFor(q.end-q.start))
		b := min(q.end, lastHour)
		if a >= b {
			return []setWindow{{q.start, q.end, true}}
		}
		return []setWindow{{a, b, false}}
	}
	var out []setWindow
	for t := q.start; t < q.end; t += q.step {
		e := min(t+q.step, q.end)
		out = append(out, setWindow{t, e, t < oldestFor(e-t) || e > lastHour})
	}
	return out
}

// AvailableDays lists the UTC midnights of the days Kubecost would return as
// non-null daily sets right now, oldest first.
func (s *Sim) AvailableDays() []time.Time {
	now := s.cfg.Now()
	today := floorDiv(now.Unix(), 86400)
	var out []time.Time
	for d := today - int64(s.cfg.RetentionDays); d < today; d++ {
		out = append(out, time.Unix(d*86400, 0).UTC())
	}
	return out
}

// idleParams reads the idle and sharing parameters each server knows; the
// others are ignored, as the real server ignores unknown parameters.
func (q *query) idleParams(v url.Values, f Flavor) error {
	type param struct {
		name string
		dst  *bool
		def  bool
	}
	// Kubecost: idle defaults to true (its Allocation API docs).
	ps := []param{{"idle", &q.idle, true}, {"splitIdle", &q.splitIdle, false},
		{"idleByNode", &q.idleByNode, false}, {"shareTenancyCosts", &q.shareTenancy, true}}
	var shareIdle bool
	if f == FlavorOpenCost {
		// OpenCost's ComputeAllocationHandler reads includeIdle and
		// idleByNode; it never sets SplitIdle, so idle stays one
		// allocation per set, and it has no tenancy costs to share.
		ps = []param{{"includeIdle", &q.idle, false}, {"idleByNode", &q.idleByNode, false}, {"shareIdle", &shareIdle, false}}
	}
	for _, p := range ps {
		b, err := boolParam(v, p.name, p.def)
		if err != nil {
			return err
		}
		*p.dst = b
	}
	if shareIdle {
		return &ParamError{"shareIdle", v.Get("shareIdle"), "the simulator does not share idle cost"}
	}
	return nil
}
