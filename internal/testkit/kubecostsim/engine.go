package kubecostsim

import (
	"context"
	"slices"
)

// member identifies what an allocation describes: one container (ci >= 0) or
// one pod (ci < 0) of one pod generation, or, with sl == nil, idle cost of a
// node (node >= 0) or of the whole cluster (node < 0).
type member struct {
	sl   *slot
	gen  int64
	node int32
	ci   int
	// merged marks an idle allocation merged across clusters: the core
	// keeps only the properties its parts agree on, so it has no cluster.
	merged bool
}

// sink consumes allocations. The JSON renderer and the truth counter are both
// sinks of the same engine, so they can never disagree.
type sink interface {
	beginSet(w setWindow) error
	alloc(name []byte, m *member, a *acc) error
	endSet() error
}

type genAcc struct {
	gen  int64
	node int32
	accs []acc
}

type group struct {
	m member
	a acc
}

type idleAcc struct {
	coreHours, ramByteHours, gpuHours float64
	cpuCost, ramCost, gpuCost         float64
}

type engine struct {
	c      *cluster
	q      *query
	out    sink
	segs   []seg
	gens   []genAcc
	nGens  int
	groups map[string]*group
	keys   []string
	name   []byte
	pod    acc
	m      member // reused: a local would escape through the sink interface
	idle   []idleAcc
	// factors scales every cost of a day (by day number since the epoch);
	// a copy taken when the request starts, so one response is consistent.
	factors map[int64]float64
	// idleFactors scales only the idle cost of a day (SetDayIdleFactor).
	idleFactors map[int64]float64

	// The core's treatment of unshared idle in a filtered query (see
	// realcore.go): filtered applies the idle filtration coefficients,
	// foreign marks a cluster the filter rejected (its allocations are
	// not emitted, only its scaled idle), and merge collects idle that is
	// not split into the one "__idle__" of the response.
	filtered, foreign bool
	ran               []bool // per node: some allocation ran on it in the set
	merge             *mergedIdle
}

func newEngine(c *cluster, q *query, out sink, factors map[int64]float64) *engine {
	e := &engine{c: c, q: q, out: out, name: make([]byte, 0, 256), factors: factors}
	if !q.podLevel() {
		e.groups = map[string]*group{}
	}
	if q.idle {
		e.idle = make([]idleAcc, len(c.nodes))
		e.ran = make([]bool, len(c.nodes))
	}
	return e
}

func (e *engine) run(ctx context.Context, sets []setWindow) error {
	for _, w := range sets {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.out.beginSet(w); err != nil {
			return err
		}
		if !w.null {
			if err := e.fill(ctx, w); err != nil {
				return err
			}
		}
		if err := e.out.endSet(); err != nil {
			return err
		}
	}
	return nil
}

func (e *engine) fill(ctx context.Context, w setWindow) error {
	clear(e.idle)
	clear(e.ran)
	clear(e.groups)
	for i := range e.c.slots {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := e.slot(&e.c.slots[i], w.start, w.end); err != nil {
			return err
		}
	}
	if e.groups != nil {
		// Kubecost's sets are Go maps marshalled by encoding/json: keys come sorted.
		e.keys = e.keys[:0]
		for k := range e.groups {
			e.keys = append(e.keys, k)
		}
		slices.Sort(e.keys)
		for _, k := range e.keys {
			g := e.groups[k]
			if err := e.out.alloc([]byte(k), &g.m, &g.a); err != nil {
				return err
			}
		}
	}
	if e.q.idle {
		return e.emitIdle(w)
	}
	return nil
}

// slot accumulates every pod generation of sl over the hours of the set, in
// ascending hour order, then hands them on. Doing it slot by slot keeps one
// container's allocation in one place and lets container and pod level stream
// without a map.
func (e *engine) slot(sl *slot, start, end int64) error {
	e.nGens = 0
	for h := start; h < end; h++ {
		e.segs = sl.segments(h, e.segs[:0])
		f := e.factor(h)
		for _, sg := range e.segs {
			g := e.genFor(sl, sg.gen)
			nd := &e.c.nodes[g.node]
			for ci := range g.accs {
				e.c.addHour(&g.accs[ci], sl, ci, nd, h, sg.from, sg.to, f)
			}
		}
	}
	for i := range e.nGens {
		if err := e.emitGen(sl, &e.gens[i]); err != nil {
			return err
		}
	}
	return nil
}

// factor is the cost factor of hour h: 1 unless the day was changed with
// SetDayCostFactor.
func (e *engine) factor(h int64) float64 {
	if f, ok := e.factors[floorDiv(h, 24)]; ok {
		return f
	}
	return 1
}

func (e *engine) genFor(sl *slot, gen int64) *genAcc {
	for i := e.nGens - 1; i >= 0; i-- {
		if e.gens[i].gen == gen {
			return &e.gens[i]
		}
	}
	if e.nGens == len(e.gens) {
		e.gens = append(e.gens, genAcc{})
	}
	g := &e.gens[e.nGens]
	e.nGens++
	g.gen, g.node = gen, e.c.nodeOf(sl, gen)
	n := len(sl.ctrl.containers)
	if cap(g.accs) < n {
		g.accs = make([]acc, n)
	}
	g.accs = g.accs[:n]
	for i := range g.accs {
		g.accs[i].reset()
	}
	return g
}

func (e *engine) emitGen(sl *slot, g *genAcc) error {
	m := &e.m
	*m = member{sl: sl, gen: g.gen, node: g.node, ci: -1}
	if e.idle != nil {
		id := &e.idle[g.node]
		e.ran[g.node] = true
		for i := range g.accs {
			a := &g.accs[i]
			id.coreHours += a.cpuCoreHours
			id.ramByteHours += a.ramByteHours
			id.gpuHours += a.gpuHours
			id.cpuCost += a.cpuCost
			id.ramCost += a.ramCost
			id.gpuCost += a.gpuCost
		}
	}
	if e.foreign {
		return nil // the filter drops the allocation; its usage stays in idle
	}
	switch {
	case e.q.podLevel() && e.q.mask.has(fContainer):
		for ci := range g.accs {
			m.ci = ci
			e.name = e.appendName(e.name[:0], m)
			if err := e.out.alloc(e.name, m, &g.accs[ci]); err != nil {
				return err
			}
		}
	case e.q.podLevel():
		e.pod.reset()
		for i := range g.accs {
			e.pod.merge(&g.accs[i])
		}
		e.name = e.appendName(e.name[:0], m)
		return e.out.alloc(e.name, m, &e.pod)
	default:
		for ci := range g.accs {
			m.ci = ci
			e.name = e.appendName(e.name[:0], m)
			grp := e.groups[string(e.name)]
			if grp == nil {
				grp = &group{m: *m}
				grp.a.reset()
				e.groups[string(e.name)] = grp
			}
			grp.a.merge(&g.accs[ci])
		}
	}
	return nil
}

const unallocated = "__unallocated__"

// appendName renders Kubecost's allocation name: the aggregated property
// values joined by "/", in the order the client asked for them.
func (e *engine) appendName(b []byte, m *member) []byte {
	c := e.c
	for i, f := range e.q.agg {
		if i > 0 {
			b = append(b, '/')
		}
		switch f {
		case fCluster:
			b = append(b, c.name...)
		case fNode:
			b = append(b, c.nodes[m.node].name...)
		case fNamespace:
			b = append(b, m.sl.ctrl.ns.name...)
		case fPod:
			b = c.appendPod(b, m.sl, m.gen, m.node)
		case fContainer:
			b = append(b, m.sl.ctrl.containers[m.ci].name...)
		case fController:
			if m.sl.ctrl.kind == "" {
				b = append(b, unallocated...)
				break
			}
			b = append(b, m.sl.ctrl.kind...)
			b = append(b, ':')
			b = c.appendController(b, m.sl, m.gen)
		case fControllerKind:
			if m.sl.ctrl.kind == "" {
				b = append(b, unallocated...)
				break
			}
			b = append(b, m.sl.ctrl.kind...)
		}
	}
	return b
}

// emitIdle adds Kubecost's __idle__ allocations: node capacity not claimed
// by any allocation during the set. Split by node, each is
// "<cluster>/<node>/__idle__"; split by cluster, "<cluster>/__idle__"; not
// split, one "__idle__" per set (merged across clusters in a Fleet).
func (e *engine) emitIdle(w setWindow) error {
	hrs := float64(w.end - w.start)
	// Capacity cost follows the day cost factors like every allocation, so
	// that idle, and the cluster's total, scale with them too.
	costHrs, idleF := 0.0, 0.0
	for h := w.start; h < w.end; h++ {
		costHrs += e.factor(h)
		idleF += e.idleFactor(h)
	}
	idleF /= hrs
	split, byNode := e.q.splitIdle, e.q.idleByNode
	cf := e.coefficients(byNode)
	var total acc
	total.reset()
	for i := range e.c.nodes {
		nd, id := &e.c.nodes[i], &e.idle[i]
		a := acc{start: w.start * 60, end: w.end * 60}
		a.cpuCoreHours = max(0, nd.cpu*hrs-id.coreHours)
		a.cpuCost = max(0, nd.cpu*costHrs*nd.cpuPrice-id.cpuCost) * idleF
		a.ramByteHours = max(0, nd.ramBytes*hrs-id.ramByteHours)
		a.ramCost = max(0, nd.ramBytes*costHrs*nd.ramPrice-id.ramCost) * idleF
		a.gpuHours = max(0, nd.gpu*hrs-id.gpuHours)
		a.gpuCost = max(0, nd.gpu*costHrs*nd.gpuPrice-id.gpuCost) * idleF
		if cf != nil {
			cf.scale(&a, i)
		}
		if !(split && byNode) {
			total.merge(&a)
			continue
		}
		e.name = append(append(append(append(e.name[:0], e.c.name...), '/'), nd.name...), "/__idle__"...)
		if err := e.out.alloc(e.name, &member{node: int32(i), ci: -1}, &a); err != nil {
			return err
		}
	}
	switch {
	case split && byNode:
		return nil
	case split:
		e.name = append(append(e.name[:0], e.c.name...), "/__idle__"...)
	case e.merge != nil:
		e.merge.add(e.c, &total)
		return nil
	default:
		e.name = append(e.name[:0], "__idle__"...)
	}
	return e.out.alloc(e.name, &member{node: -1, ci: -1}, &total)
}

// idleFactor is the idle cost factor of hour h: 1 unless the day was
// changed with SetDayIdleFactor.
func (e *engine) idleFactor(h int64) float64 {
	if f, ok := e.idleFactors[floorDiv(h, 24)]; ok {
		return f
	}
	return 1
}
