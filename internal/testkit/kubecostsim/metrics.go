package kubecostsim

import (
	"math"
	"strconv"
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// seg is the part of one pod generation inside one hour, in absolute minutes.
type seg struct {
	gen      int64
	from, to int64
}

// segments appends the pod generations of slot s that run during hour h
// (hours since the Unix epoch). It depends only on (s, h): that is what makes
// any hour identical whichever window it is queried in.
func (s *slot) segments(h int64, out []seg) []seg {
	h0, h1 := h*60, h*60+60
	add := func(gen, start, end int64) {
		if from, to := max(start, h0), min(end, h1); from < to {
			out = append(out, seg{gen, from, to})
		}
	}
	switch s.pat {
	case patContinuous:
		out = append(out, seg{0, h0, h1})
	case patRolling:
		// Generation g starts at a random minute of hour g*life-phase and runs
		// until g+1 starts, so the old and new pod share the hour of a rollover.
		start := func(g int64) int64 { return (g*s.life-s.phase)*60 + int64(hash(s.seed, uint64(g))%60) }
		g := floorDiv(h+s.phase, s.life)
		add(g-1, start(g-1), start(g))
		add(g, start(g), start(g+1))
	case patJob:
		k := floorDiv(h-s.phase, s.life)
		for _, run := range [2]int64{k - 1, k} {
			st := (run*s.life+s.phase)*60 + int64(hash(s.seed, uint64(run))%30)
			dur := 5 + int64(hash(s.seed^1, uint64(run))%uint64(min(s.life*60-40, 150)))
			add(run, st, st+dur)
		}
	case patScaled:
		d := floorDiv(h, 24)
		x := hash(s.seed, uint64(d))
		if floorMod(d+3, 7) >= 5 && x%10 < 7 { // day 0 was a Thursday; quiet weekends
			break
		}
		a := (7+int64(x>>8%3))*60 + int64(x>>16%60)
		b := (17+int64(x>>24%5))*60 + int64(x>>32%60)
		add(d, d*1440+a, d*1440+b)
	case patBare:
		d := floorDiv(h, 24)
		x := hash(s.seed, uint64(d))
		if x%2 == 0 {
			break
		}
		a := int64(x >> 8 % 900)
		dur := 60 + int64(x>>20%uint64(1440-a-59))
		add(d, d*1440+a, d*1440+a+dur)
	}
	return out
}

// nodeOf says where generation gen of slot s runs.
func (c *cluster) nodeOf(s *slot, gen int64) int32 {
	if s.node >= 0 {
		return s.node
	}
	pool := c.cpuNodes
	if s.gpu {
		pool = c.gpuNodes
	}
	return pool[hash(s.seed^0x5eed, uint64(gen))%uint64(len(pool))]
}

const kubeAlphabet = "bcdfghjklmnpqrstvwxz2456789" // what Kubernetes uses for generated names

func appendRandSuffix(b []byte, x uint64, n int) []byte {
	for range n {
		b = append(b, kubeAlphabet[x%27])
		x /= 27
	}
	return b
}

// appendUniqueSuffix renders 5 random-looking characters that are distinct for
// distinct (ordinal, gen) of one controller: a bijection on [0, 27^5), so pod
// names never collide inside a query window.
func appendUniqueSuffix(b []byte, ctl *controller, ordinal int, gen int64) []byte {
	const m = 27 * 27 * 27 * 27 * 27
	r := uint64(max(ctl.replicas, 1))
	x := uint64(ordinal) + r*uint64(floorMod(gen, int64(m/r)))
	return appendRandSuffix(b, (x*2654435761+ctl.seed%m)%m, 5)
}

// jobStamp is the CronJob schedule time in minutes, as in "report-29410560".
func (s *slot) jobStamp(gen int64) int64 { return (gen*s.life + s.phase) * 60 }

func (c *cluster) appendPod(b []byte, s *slot, gen int64, node int32) []byte {
	ctl := s.ctrl
	b = append(b, ctl.name...)
	b = append(b, '-')
	switch ctl.kind {
	case "statefulset":
		return strconv.AppendInt(b, int64(s.ordinal), 10)
	case "daemonset":
		return appendUniqueSuffix(b, ctl, int(node), 0)
	case "job":
		b = strconv.AppendInt(b, s.jobStamp(gen), 10)
		b = append(b, '-')
		return appendRandSuffix(b, hash(s.seed, uint64(gen)), 5)
	case "deployment":
		b = appendTemplateHash(b, s, gen)
		b = append(b, '-')
	}
	return appendUniqueSuffix(b, ctl, s.ordinal, gen)
}

// appendTemplateHash renders a deployment pod's pod-template-hash: it
// changes with each rollout of the controller.
func appendTemplateHash(b []byte, s *slot, gen int64) []byte {
	startHour := gen*s.life - s.phase
	if s.pat == patScaled {
		startHour = gen * 24
	}
	return appendRandSuffix(b, hash(s.ctrl.seed, uint64(floorDiv(startHour, s.ctrl.rolloutHours))), 10)
}

// appendController renders Kubecost's controller property; "" for bare pods.
func (c *cluster) appendController(b []byte, s *slot, gen int64) []byte {
	b = append(b, s.ctrl.name...)
	if s.ctrl.kind == "job" {
		b = append(b, '-')
		b = strconv.AppendInt(b, s.jobStamp(gen), 10)
	}
	return b
}

// acc accumulates one allocation. Raw sums only; derived numbers (averages,
// efficiencies, totalCost) come from methods so JSON and truth agree exactly.
type acc struct {
	start, end                                  int64 // minutes since epoch
	cpuCoreHours, cpuReqCoreMin, cpuUseCoreMin  float64
	cpuCost, cpuAdj, gpuHours, gpuCost, gpuAdj  float64
	netTx, netRx, netCZ, netCR, netInet, netAdj float64
	lbCost, lbAdj, pvByteHours, pvCost, pvAdj   float64
	ramByteHours, ramReqByteMin, ramUseByteMin  float64
	ramCost, ramAdj, shared, external           float64
	pvs                                         []pvUse
}

type pvUse struct {
	sl              *slot
	byteHours, cost float64
}

func (a *acc) reset() {
	pvs := a.pvs[:0]
	*a = acc{start: math.MaxInt64, end: math.MinInt64, pvs: pvs}
}

func (a *acc) addPV(p pvUse) {
	if n := len(a.pvs); n > 0 && a.pvs[n-1].sl == p.sl {
		a.pvs[n-1].byteHours += p.byteHours
		a.pvs[n-1].cost += p.cost
		return
	}
	a.pvs = append(a.pvs, p)
}

func (a *acc) merge(b *acc) {
	a.start, a.end = min(a.start, b.start), max(a.end, b.end)
	a.cpuCoreHours += b.cpuCoreHours
	a.cpuReqCoreMin += b.cpuReqCoreMin
	a.cpuUseCoreMin += b.cpuUseCoreMin
	a.cpuCost += b.cpuCost
	a.cpuAdj += b.cpuAdj
	a.gpuHours += b.gpuHours
	a.gpuCost += b.gpuCost
	a.gpuAdj += b.gpuAdj
	a.netTx += b.netTx
	a.netRx += b.netRx
	a.netCZ += b.netCZ
	a.netCR += b.netCR
	a.netInet += b.netInet
	a.netAdj += b.netAdj
	a.lbCost += b.lbCost
	a.lbAdj += b.lbAdj
	a.pvByteHours += b.pvByteHours
	a.pvCost += b.pvCost
	a.pvAdj += b.pvAdj
	a.ramByteHours += b.ramByteHours
	a.ramReqByteMin += b.ramReqByteMin
	a.ramUseByteMin += b.ramUseByteMin
	a.ramCost += b.ramCost
	a.ramAdj += b.ramAdj
	a.shared += b.shared
	a.external += b.external
	for _, p := range b.pvs {
		a.addPV(p)
	}
}

func (a *acc) minutes() float64 { return float64(a.end - a.start) }

func (a *acc) perHour(v float64) float64 {
	if a.end <= a.start {
		return 0
	}
	return v * 60 / a.minutes()
}

func (a *acc) perMinute(v float64) float64 {
	if a.end <= a.start {
		return 0
	}
	return v / a.minutes()
}

func efficiency(use, req float64) float64 {
	switch {
	case req > 0:
		return use / req
	case use > 0:
		return 1
	}
	return 0
}

func (a *acc) cpuEfficiency() float64 { return efficiency(a.cpuUseCoreMin, a.cpuReqCoreMin) }
func (a *acc) ramEfficiency() float64 { return efficiency(a.ramUseByteMin, a.ramReqByteMin) }
func (a *acc) networkCost() float64   { return a.netCZ + a.netCR + a.netInet }

func (a *acc) totalCost() float64 {
	return a.cpuCost + a.cpuAdj + a.gpuCost + a.gpuAdj + a.ramCost + a.ramAdj + a.pvCost + a.pvAdj +
		a.networkCost() + a.netAdj + a.lbCost + a.lbAdj + a.shared + a.external
}

func (a *acc) totalEfficiency() float64 {
	if d := a.cpuCost + a.ramCost; d > 0 {
		return (a.cpuEfficiency()*a.cpuCost + a.ramEfficiency()*a.ramCost) / d
	}
	return 0
}

// addHour adds container ci of slot s, running on nd from minute from to to
// of hour h. Every number is a pure function of (slot, container, hour);
// every cost is multiplied by f, the hour's cost factor (normally 1).
func (c *cluster) addHour(a *acc, s *slot, ci int, nd *node, h, from, to int64, f float64) {
	cs := &s.ctrl.containers[ci]
	mins := float64(to - from)
	hrs := mins / 60
	x := hash(s.seed+uint64(ci)*0x9e3779b97f4a7c15, uint64(h))
	u1, u2, u3, u4 := unit(x), unit(mix(x+1)), unit(mix(x+2)), unit(mix(x+3))
	load := c.diurnal[floorMod(h, 24)]
	day := uint64(floorDiv(h, 24))
	cpuAdjRate := -0.05 + 0.07*unit(hash(nd.seed, day)) // daily reconciliation per node
	ramAdjRate := -0.04 + 0.05*unit(hash(nd.seed^0xa11, day))

	base := cs.cpuReq
	if base == 0 {
		base = 0.05
	}
	useCPU := base * cs.cpuUtil * load * (0.6 + 0.8*u1)
	cores := max(cs.cpuReq, useCPU)
	a.start, a.end = min(a.start, from), max(a.end, to)
	a.cpuCoreHours += cores * hrs
	a.cpuReqCoreMin += cs.cpuReq * mins
	a.cpuUseCoreMin += useCPU * mins
	cpuCost := cores * hrs * nd.cpuPrice * f
	a.cpuCost += cpuCost
	a.cpuAdj += cpuCost * cpuAdjRate

	baseRAM := cs.ramReq
	if baseRAM == 0 {
		baseRAM = 96 << 20
	}
	useRAM := math.Round(baseRAM * cs.ramUtil * (0.85 + 0.3*u2))
	ramBytes := max(cs.ramReq, useRAM)
	a.ramByteHours += ramBytes * hrs
	a.ramReqByteMin += cs.ramReq * mins
	a.ramUseByteMin += useRAM * mins
	ramCost := ramBytes * hrs * nd.ramPrice * f
	a.ramCost += ramCost
	a.ramAdj += ramCost * ramAdjRate

	if cs.gpu > 0 {
		a.gpuHours += cs.gpu * hrs
		a.gpuCost += cs.gpu * hrs * nd.gpuPrice * f
	}
	if cs.netRate > 0 {
		tx := math.Round(cs.netRate * hrs * load * (0.5 + u3))
		a.netTx += tx
		a.netRx += math.Round(tx * (0.3 + u4))
		gb := tx / 1e9
		a.netCZ += gb * 0.3 * 0.01 * f
		a.netCR += gb * 0.02 * 0.02 * f
		a.netInet += gb * 0.05 * 0.09 * f
	}
	if ci == 0 && s.ctrl.lbHourly > 0 {
		a.lbCost += s.ctrl.lbHourly * hrs * f
	}
	if s.ctrl.pvBytes > 0 {
		// Kubecost splits a pod's volumes evenly among its containers.
		bh := s.ctrl.pvBytes / float64(len(s.ctrl.containers)) * hrs
		cost := bh / (1 << 30) * 0.08 / 730 * f
		a.pvByteHours += bh
		a.pvCost += cost
		a.addPV(pvUse{s, bh, cost})
	}
}
