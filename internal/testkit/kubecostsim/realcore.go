package kubecostsim

// What the core (OpenCost's AllocationSet.AggregateBy, which Kubecost's
// cost model runs too) does with idle allocations that are not shared,
// in the simulator's words:
//
//   - They go into the result before the filter is applied, so a response
//     filtered to one cluster still holds every cluster's idle.
//   - With a filter, each is scaled, per resource, by its "idle filtration
//     coefficient": the share of the allocated cost of its node (idleByNode)
//     or cluster that passed the filter. A node of a rejected cluster that
//     ran something keeps a row of cost 0. A node that ran nothing has no
//     coefficient and keeps its full idle cost. On the filtered cluster's
//     own nodes a resource nobody was allocated (total cost 0) gets 0.
//   - Without splitIdle every idle allocation is merged into one
//     "__idle__"; its properties are those its parts agree on, so the
//     idle of several clusters has no cluster.

// idleCoef holds the filtration coefficient of each node's idle, per
// resource.
type idleCoef struct {
	cpu, ram, gpu []float64
}

func (c *idleCoef) scale(a *acc, node int) {
	a.cpuCost *= c.cpu[node]
	a.cpuCoreHours *= c.cpu[node]
	a.ramCost *= c.ram[node]
	a.ramByteHours *= c.ram[node]
	a.gpuCost *= c.gpu[node]
	a.gpuHours *= c.gpu[node]
}

// coefficients returns the idle filtration coefficients of the set just
// filled, or nil when the query had no filter (idle is then whole).
func (e *engine) coefficients(byNode bool) *idleCoef {
	if !e.filtered {
		return nil
	}
	n := len(e.c.nodes)
	cf := &idleCoef{cpu: make([]float64, n), ram: make([]float64, n), gpu: make([]float64, n)}
	var all idleAcc
	ranAny := false
	for i := range n {
		ranAny = ranAny || e.ran[i]
		all.cpuCost += e.idle[i].cpuCost
		all.ramCost += e.idle[i].ramCost
		all.gpuCost += e.idle[i].gpuCost
	}
	kept := func(cost float64) float64 {
		// Every allocation of the filtered cluster passed: the shares sum
		// to 1, unless nothing was allocated of the resource.
		if cost > 0 {
			return 1
		}
		return 0
	}
	for i := range n {
		ran, used := e.ran[i], e.idle[i]
		if !byNode {
			ran, used = ranAny, all
		}
		switch {
		case !ran:
			cf.cpu[i], cf.ram[i], cf.gpu[i] = 1, 1, 1
		case e.foreign:
			// Every allocation was filtered out: all coefficients 0.
		default:
			cf.cpu[i], cf.ram[i], cf.gpu[i] = kept(used.cpuCost), kept(used.ramCost), kept(used.gpuCost)
		}
	}
	return cf
}

// mergedIdle collects the idle of a set that is not split, across the
// clusters of a response.
type mergedIdle struct {
	a        acc
	c        *cluster // the last cluster added
	clusters int      // distinct clusters added
}

func (m *mergedIdle) reset() {
	m.a.reset()
	m.c, m.clusters = nil, 0
}

func (m *mergedIdle) add(c *cluster, a *acc) {
	m.a.merge(a)
	if m.c != c {
		m.c = c
		m.clusters++
	}
}
