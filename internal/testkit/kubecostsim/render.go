package kubecostsim

import (
	"io"
	"math"
	"strconv"
	"time"
)

// flushAt bounds the render buffer: the body streams out in chunks of about
// this size and is never held whole.
const flushAt = 64 << 10

// jsonSink renders allocations as Kubecost 2.x JSON, appending into one
// reusable buffer; it is hand-written because encoding/json is several times
// too slow for 2 GB bodies.
type jsonSink struct {
	c      *cluster
	q      *query
	w      io.Writer
	buf    []byte
	quirks Quirks
	empty  bool // unavailable sets render as {} instead of null
	loc    *time.Location

	nSets, nAllocs int
	count          uint64 // allocations so far, picks which ones get quirks
	null           bool
	win            setWindow
	winStart       []byte // quoted timestamps of the current set
	winEnd         []byte
	zero           int // how this allocation renders zeros: 0 "0", 1 null, 2 -0
	written        int64
}

func (j *jsonSink) flush() error {
	n, err := j.w.Write(j.buf)
	j.written += int64(n)
	j.buf = j.buf[:0]
	return err
}

func (j *jsonSink) begin() {
	j.buf = append(j.buf, `{"code":200,"status":"success",`...)
	if j.quirks.ExtraFields {
		j.buf = append(j.buf, `"meta":{"version":"2.4.3","cached":false,"tags":["sim",1,null]},`...)
	}
	j.buf = append(j.buf, `"data":[`...)
}

func (j *jsonSink) finish() error {
	j.buf = append(j.buf, ']')
	if j.quirks.ExtraFields {
		j.buf = append(j.buf, `,"message":"","warning":"simulated data"`...)
	}
	j.buf = append(j.buf, "}\n"...)
	return j.flush()
}

func (j *jsonSink) appendTime(b []byte, minute int64) []byte {
	t := time.Unix(minute*60, 0).In(j.loc)
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339)
	return append(b, '"')
}

func (j *jsonSink) beginSet(w setWindow) error {
	if j.nSets > 0 {
		j.buf = append(j.buf, ',')
	}
	j.nSets++
	j.nAllocs, j.null, j.win = 0, w.null, w
	switch {
	case w.null && j.empty:
		j.buf = append(j.buf, "{}"...)
	case w.null:
		j.buf = append(j.buf, "null"...)
	default:
		j.winStart = j.appendTime(j.winStart[:0], w.start*60)
		j.winEnd = j.appendTime(j.winEnd[:0], w.end*60)
		j.buf = append(j.buf, '{')
	}
	return nil
}

func (j *jsonSink) endSet() error {
	if !j.null {
		j.buf = append(j.buf, '}')
	}
	return j.flush()
}

// appendString quotes s as a JSON string. Generated names are plain ASCII, so
// the common case is a copy.
func appendString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat formats like encoding/json: shortest round-trip digits, so a
// decoded number is bit-identical to the generator's.
func appendFloat(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if a := math.Abs(f); a < 1e-6 || a >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1] // e-07 → e-7
			b = b[:n-1]
		}
	}
	return b
}

// num appends a number that may be zero. Quirks only touch zeros, so the
// totals a client computes stay right.
func (j *jsonSink) num(b []byte, key string, v float64) []byte {
	b = append(b, key...)
	if v == 0 {
		switch j.zero {
		case 1:
			return append(b, "null"...)
		case 2:
			return append(b, "-0"...)
		}
	}
	return appendFloat(b, v)
}

// eff appends an efficiency; undefined tells that no request was set.
func (j *jsonSink) eff(b []byte, key string, v float64, undefined bool) []byte {
	b = append(b, key...)
	switch {
	case j.quirks.NaNStrings && (undefined || j.count%13 == 7):
		return append(b, `"NaN"`...)
	case j.quirks.NullNumbers && j.count%7 == 3:
		return append(b, "null"...)
	}
	return appendFloat(b, v)
}

func (j *jsonSink) alloc(name []byte, m *member, a *acc) error {
	j.count++
	j.zero = 0
	switch k := j.count % 4; {
	case j.quirks.NullNumbers && k == 1:
		j.zero = 1
	case j.quirks.NegativeZero && k == 2:
		j.zero = 2
	}
	b := j.buf
	if j.nAllocs > 0 {
		b = append(b, ',')
	}
	j.nAllocs++
	b = appendString(b, name)
	b = append(b, `:{"name":`...)
	b = appendString(b, name)
	b = j.props(b, m)
	b = append(b, `,"window":{"start":`...)
	b = append(b, j.winStart...)
	b = append(b, `,"end":`...)
	b = append(b, j.winEnd...)
	b = append(b, `},"start":`...)
	if a.start == j.win.start*60 {
		b = append(b, j.winStart...)
	} else {
		b = j.appendTime(b, a.start)
	}
	b = append(b, `,"end":`...)
	if a.end == j.win.end*60 {
		b = append(b, j.winEnd...)
	} else {
		b = j.appendTime(b, a.end)
	}
	b = append(b, `,"minutes":`...)
	b = appendFloat(b, a.minutes())
	b = j.num(b, `,"cpuCores":`, a.perHour(a.cpuCoreHours))
	b = j.num(b, `,"cpuCoreRequestAverage":`, a.perMinute(a.cpuReqCoreMin))
	// The core's marshaller writes NaN and Inf as null: a container whose
	// usage Prometheus answered with NaN has null usage and efficiencies.
	nan := j.quirks.NullNaN && m.sl != nil && j.count%11 == 5
	if nan {
		b = append(b, `,"cpuCoreUsageAverage":null`...)
	} else {
		b = j.num(b, `,"cpuCoreUsageAverage":`, a.perMinute(a.cpuUseCoreMin))
	}
	b = j.num(b, `,"cpuCoreHours":`, a.cpuCoreHours)
	b = j.num(b, `,"cpuCost":`, a.cpuCost)
	b = j.num(b, `,"cpuCostAdjustment":`, a.cpuAdj)
	if nan {
		b = append(b, `,"cpuEfficiency":null`...)
	} else {
		b = j.eff(b, `,"cpuEfficiency":`, a.cpuEfficiency(), a.cpuReqCoreMin == 0)
	}
	b = j.num(b, `,"gpuCount":`, a.perHour(a.gpuHours))
	b = j.num(b, `,"gpuHours":`, a.gpuHours)
	b = j.num(b, `,"gpuCost":`, a.gpuCost)
	b = j.num(b, `,"gpuCostAdjustment":`, a.gpuAdj)
	b = j.num(b, `,"networkTransferBytes":`, a.netTx)
	b = j.num(b, `,"networkReceiveBytes":`, a.netRx)
	b = j.num(b, `,"networkCost":`, a.networkCost())
	b = j.num(b, `,"networkCrossZoneCost":`, a.netCZ)
	b = j.num(b, `,"networkCrossRegionCost":`, a.netCR)
	b = j.num(b, `,"networkInternetCost":`, a.netInet)
	b = j.num(b, `,"networkCostAdjustment":`, a.netAdj)
	b = j.num(b, `,"loadBalancerCost":`, a.lbCost)
	b = j.num(b, `,"loadBalancerCostAdjustment":`, a.lbAdj)
	b = j.num(b, `,"pvBytes":`, a.perHour(a.pvByteHours))
	b = j.num(b, `,"pvByteHours":`, a.pvByteHours)
	b = j.num(b, `,"pvCost":`, a.pvCost)
	b = j.pvs(b, a)
	b = j.num(b, `,"pvCostAdjustment":`, a.pvAdj)
	b = j.num(b, `,"ramBytes":`, a.perHour(a.ramByteHours))
	b = j.num(b, `,"ramByteRequestAverage":`, a.perMinute(a.ramReqByteMin))
	b = j.num(b, `,"ramByteUsageAverage":`, a.perMinute(a.ramUseByteMin))
	b = j.num(b, `,"ramByteHours":`, a.ramByteHours)
	b = j.num(b, `,"ramCost":`, a.ramCost)
	b = j.num(b, `,"ramCostAdjustment":`, a.ramAdj)
	b = j.eff(b, `,"ramEfficiency":`, a.ramEfficiency(), a.ramReqByteMin == 0)
	b = j.num(b, `,"externalCost":`, a.external)
	b = j.num(b, `,"sharedCost":`, a.shared)
	b = append(b, `,"totalCost":`...)
	b = appendFloat(b, a.totalCost())
	if nan {
		b = append(b, `,"totalEfficiency":null`...)
	} else {
		b = j.eff(b, `,"totalEfficiency":`, a.totalEfficiency(), false)
	}
	b = append(b, `,"proportionalAssetResourceCosts":{},"lbAllocations":null,"sharedCostBreakdown":{},"gpuAllocation":null`...)
	// Kubecost keeps peak usage only for allocations it did not have to
	// aggregate: one container, one pod.
	if m.sl != nil && j.q.podLevel() && j.q.mask.has(fContainer) {
		b = append(b, `,"rawAllocationOnly":{"cpuCoreUsageMax":`...)
		b = appendFloat(b, a.perMinute(a.cpuUseCoreMin)*1.3)
		b = append(b, `,"ramByteUsageMax":`...)
		b = appendFloat(b, math.Round(a.perMinute(a.ramUseByteMin)*1.1))
		b = append(b, `,"gpuUsageMax":null}`...)
	} else {
		b = append(b, `,"rawAllocationOnly":null`...)
	}
	if j.quirks.ExtraFields && m.sl != nil {
		b = append(b, `,"x_futureField":{"values":[1,2.5,{"nested":[null,true]}],"note":"ignore me"}`...)
	}
	b = append(b, '}')
	j.buf = b
	if len(b) >= flushAt {
		return j.flush()
	}
	return nil
}

func (j *jsonSink) pvs(b []byte, a *acc) []byte {
	if len(a.pvs) == 0 {
		return append(b, `,"pvs":null`...)
	}
	b = append(b, `,"pvs":{`...)
	for i, p := range a.pvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p.sl.pvKey)
		b = append(b, `:{"byteHours":`...)
		b = appendFloat(b, p.byteHours)
		b = append(b, `,"cost":`...)
		b = appendFloat(b, p.cost)
		b = append(b, `,"providerID":"`...)
		b = append(b, p.sl.pvID...)
		b = append(b, `","adjustment":0}`...)
	}
	return append(b, '}')
}

// props renders the properties Kubecost keeps after aggregating: those the
// aggregation pins down. Pod-level aggregations pin everything about the pod.
func (j *jsonSink) props(b []byte, m *member) []byte {
	c, mask, pod := j.c, j.q.mask, j.q.podLevel()
	if m.merged { // idle of several clusters: they agree on no property
		return append(b, `,"properties":{}`...)
	}
	b = append(b, `,"properties":{"cluster":`...)
	b = append(b, c.nameJSON...)
	if m.sl == nil { // idle
		if m.node >= 0 {
			nd := &c.nodes[m.node]
			b = append(append(append(b, `,"node":"`...), nd.name...), '"')
			if !j.quirks.NoProviderID {
				b = append(append(append(b, `,"providerID":"`...), nd.providerID...), '"')
			}
		}
		return append(b, '}')
	}
	sl, ctl := m.sl, m.sl.ctrl
	var nd *node
	if pod || mask.has(fNode) {
		nd = &c.nodes[m.node]
		b = append(append(append(b, `,"node":"`...), nd.name...), '"')
	}
	if mask.has(fContainer) {
		b = append(append(append(b, `,"container":"`...), ctl.containers[m.ci].name...), '"')
	}
	if ctl.kind != "" && (pod || mask.has(fController)) {
		b = append(b, `,"controller":"`...)
		b = append(c.appendController(b, sl, m.gen), '"')
	}
	if ctl.kind != "" && (pod || mask.has(fController) || mask.has(fControllerKind)) {
		b = append(append(append(b, `,"controllerKind":"`...), ctl.kind...), '"')
	}
	if pod || mask.has(fNamespace) {
		b = append(append(append(b, `,"namespace":"`...), ctl.ns.name...), '"')
	}
	if mask.has(fPod) {
		b = append(b, `,"pod":"`...)
		b = append(c.appendPod(b, sl, m.gen, m.node), '"')
	}
	if pod && ctl.services != nil {
		b = append(append(b, `,"services":`...), ctl.services...)
	}
	if nd != nil {
		if !j.quirks.NoProviderID {
			b = append(append(append(b, `,"providerID":"`...), nd.providerID...), '"')
		}
		b = append(append(b, `,"labels":{`...), nd.labels...)
		if pod {
			if len(ctl.labels) > 0 {
				b = append(append(b, ','), ctl.labels...)
			}
			if ctl.kind == "deployment" {
				b = append(b, `,"pod_template_hash":"`...)
				b = append(appendTemplateHash(b, sl, m.gen), '"')
			}
		}
		b = append(b, '}')
	}
	if pod && len(ctl.annotations) > 0 {
		b = append(append(append(b, `,"annotations":{`...), ctl.annotations...), '}')
	}
	if pod || mask.has(fNamespace) {
		b = append(append(append(b, `,"namespaceLabels":{`...), ctl.ns.labels...), '}')
		if len(ctl.ns.annotations) > 0 {
			b = append(append(append(b, `,"namespaceAnnotations":{`...), ctl.ns.annotations...), '}')
		}
	}
	if j.quirks.ExtraFields {
		b = append(b, `,"x_unknownProperty":{"k":["v",2]}`...)
	}
	return append(b, '}')
}
