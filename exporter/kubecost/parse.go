package kubecost

import (
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Allocation member actions. Values >= fieldDouble are fieldDouble+index.
const (
	fieldSkip = iota
	fieldName
	fieldProperties
	fieldWindow
	fieldStart
	fieldEnd
	fieldDouble
)

// Pseudo property indexes for the nested label and annotation objects.
const (
	propLabels      = -2
	propAnnotations = -3
)

// parser turns each allocation the scanner reaches into rec.
type parser struct {
	proj   *schema.Projection
	rec    *schema.Record
	sc     scanner
	fields keyCache // allocation member -> field*
	props  keyCache // properties member -> Props index, or propLabels/propAnnotations
	labels keyCache // label key -> Record.Labels slot
	annots keyCache // annotation key -> Record.Annotations slot
	strs   interner
	unq    []byte               // scratch for strings with escapes
	extras []schema.ExtraColumn // schema.Extras, looked up once

	// The previous allocation's values, by slot: consecutive allocations
	// mostly share cluster, node, namespace and node labels, and comparing
	// with the last value is cheaper than hashing into the interner.
	// Labels and annotations compare with the previous allocation's map
	// entries instead (stringMap).
	lastProps [schema.NumProps]string

	// fallback window of set i: [start+i*step, start+(i+1)*step), used when
	// an allocation carries no window at all.
	start, step int64
}

func newParser(p *schema.Projection) *parser {
	fields := map[string]int{"name": fieldName, "properties": fieldProperties, "window": fieldWindow, "start": fieldStart, "end": fieldEnd}
	for i, n := range schema.DoubleNames() {
		fields[n] = fieldDouble + i
	}
	extras := schema.Extras()
	for i, e := range extras {
		if !e.Property {
			fields[e.Key] = fieldExtra + i
		}
	}
	r := p.NewRecord()
	return &parser{
		proj: p,
		rec:  r,
		fields: keyCache{resolve: func(k []byte) int {
			return fields[string(k)] // fieldSkip when absent
		}},
		props: keyCache{resolve: func(k []byte) int {
			switch string(k) {
			case "labels":
				return propLabels
			case "annotations":
				return propAnnotations
			}
			if i, ok := schema.KubecostPropIndex(string(k)); ok {
				return i
			}
			if x := schema.ExtraKey(string(k), true); x >= 0 {
				return propExtra - x
			}
			return -1
		}},
		labels: keyCache{resolve: func(k []byte) int { return p.LabelSlot(string(k)) }},
		annots: keyCache{resolve: func(k []byte) int { return p.AnnotationSlot(string(k)) }},
		strs:   interner{m: make(map[string]string, 1024), max: internMax},
		extras: extras,
	}
}

// allocation fills p.rec from the allocation object at the scanner, of set
// number set, whose decoded key in the set is key (the name when "name" is
// missing). The caller checks the scanner's error before using p.rec.
func (p *parser) allocation(key []byte, set int64) {
	r := p.rec
	p.proj.Reset(r)
	var wStart, wEnd, aStart, aEnd int64
	var hasW, hasA uint8 // bit 0: start, bit 1: end
	s := &p.sc
	s.enter('{')
	for {
		k, ok := s.member()
		if !ok {
			break
		}
		f := cacheGet(&p.fields, k)
		switch {
		case f >= fieldExtra:
			p.extra(f - fieldExtra)
		case f >= fieldDouble:
			r.Num[f-fieldDouble] = p.number()
		case f == fieldName:
			r.Name = p.strs.get(p.str())
		case f == fieldProperties:
			p.properties()
		case f == fieldWindow:
			p.window(&wStart, &wEnd, &hasW)
		case f == fieldStart:
			p.time(&aStart, &hasA, 1)
		case f == fieldEnd:
			p.time(&aEnd, &hasA, 2)
		default:
			s.skip()
		}
	}
	if r.Name == "" {
		r.Name = p.strs.get(key)
	}
	// The allocation's own window wins, then its start/end, then the set's.
	fallback := p.start + set*p.step
	r.Start = pick(hasW&1 != 0, wStart, hasA&1 != 0, aStart, fallback)
	r.End = pick(hasW&2 != 0, wEnd, hasA&2 != 0, aEnd, fallback+p.step)
	p.proj.Finish(r)
}

func pick(okA bool, a int64, okB bool, b int64, c int64) int64 {
	if okA {
		return a
	}
	if okB {
		return b
	}
	return c
}

func (p *parser) properties() {
	s := &p.sc
	if !s.enter('{') {
		return
	}
	r := p.rec
	for {
		k, ok := s.member()
		if !ok {
			return
		}
		switch i := cacheGet(&p.props, k); {
		case i >= 0:
			if v := p.scalar(); p.lastProps[i] != string(v) {
				p.lastProps[i] = p.strs.get(v)
			}
			r.Props[i] = p.lastProps[i]
		case i == propLabels:
			p.labelSet(&p.labels, r.Labels, &r.X[schema.XLabels])
		case i == propAnnotations:
			p.labelSet(&p.annots, r.Annotations, &r.X[schema.XAnnotations])
		case i <= propExtra:
			p.extra(propExtra - i)
		default:
			s.skip()
		}
	}
}

// labelSet keeps every label (or annotation) in all, for the map column,
// and fills the slots the projection asks for (LABELS and the node labels
// of the derived properties). A slot shares the map entry's string.
func (p *parser) labelSet(slots *keyCache, dst []string, all *schema.Nested) {
	s := &p.sc
	if !s.enter('{') {
		return
	}
	all.Set = true
	start := len(all.KV)
	p.stringMap(all)
	for _, kv := range all.KV[start:] {
		if slot := cacheGet(slots, kv.Key); slot >= 0 {
			dst[slot] = kv.Value
		}
	}
}

func (p *parser) window(start, end *int64, has *uint8) {
	s := &p.sc
	if !s.enter('{') {
		return
	}
	for {
		k, ok := s.member()
		if !ok {
			return
		}
		switch string(k) {
		case "start":
			p.time(start, has, 1)
		case "end":
			p.time(end, has, 2)
		default:
			s.skip()
		}
	}
}

// time reads an RFC 3339 timestamp into *ms and sets bit in *has. Other
// shapes and unparsable strings leave both untouched.
func (p *parser) time(ms *int64, has *uint8, bit uint8) {
	b := p.str()
	if len(b) == 0 {
		return
	}
	if t, ok := parseTime(b); ok {
		*ms, *has = t, *has|bit
	}
}

// str reads a string value; other kinds read as "". The bytes are valid
// until the next read.
func (p *parser) str() []byte {
	v := p.sc.value()
	if v[0] != '"' {
		return nil
	}
	return p.sc.text(v, &p.unq)
}

// scalar reads a string, number or boolean as its text; null and
// composites read as "".
func (p *parser) scalar() []byte {
	v := p.sc.value()
	switch v[0] {
	case '"':
		return p.sc.text(v, &p.unq)
	case 'n', '{', '[':
		return nil
	}
	return v
}

// number reads a number (see numberOf), a plain one in one pass.
func (p *parser) number() float64 {
	if f, ok := p.sc.float(); ok {
		return f
	}
	return numberOf(p.sc.value(), &p.unq)
}
