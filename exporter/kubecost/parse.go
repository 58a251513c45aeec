package kubecost

import (
	"slices"
	"time"

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

	// The previous allocation's values, by slot: consecutive allocations mostly share cluster,
	// node, namespace and node labels, and a compare is cheaper than hashing into the interner
	// (labels and annotations: see stringMap).
	lastProps [schema.NumProps]string

	// fallback window of set i, [start+i*step, start+(i+1)*step), for an allocation without one.
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
	return &parser{
		proj: p,
		rec:  p.NewRecord(),
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
		strs:   make(interner, 1024),
		extras: extras,
	}
}

// allocation fills p.rec from the allocation object at the scanner, of set number set, whose
// decoded key is key (the name when "name" is missing). The caller checks the scanner's error.
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

// labelSet keeps every label (or annotation) in all, for the map column, and fills the slots
// the projection asks for (LABELS, derived properties' node labels) with the entry's string.
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

// time reads an RFC 3339 timestamp into *ms and sets bit in *has; else both stay untouched.
func (p *parser) time(ms *int64, has *uint8, bit uint8) {
	if t, ok := parseTime(p.str()); ok {
		*ms, *has = t, *has|bit
	}
}

// str reads a string value, valid until the next read; other kinds read as "".
func (p *parser) str() []byte {
	v := p.sc.value()
	if v[0] != '"' {
		return nil
	}
	return p.sc.text(v, &p.unq)
}

// scalar reads a string, number or boolean as its text; null and composites read as "".
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

// keyCache maps member names to small ints through a cache in front of resolve (a map lookup).
// Its hash reads six bytes and the length, and a name has two candidate entries, so a lookup is
// mostly one string compare. Distinct names are few (fields, label keys): the cache fills once,
// then hits; a name finding both entries taken keeps asking resolve, merely slower.
type keyCache struct {
	ents    [512]keyEntry
	resolve func([]byte) int // must not retain its argument
}

type keyEntry struct {
	key string
	val int32
	set bool
}

// cacheGet is c's value of name b; generic, so a string key needs no conversion to bytes.
func cacheGet[T string | []byte](c *keyCache, b T) int {
	n := len(b)
	h := uint32(n) * 0x9e3779b1
	if n > 0 {
		h ^= uint32(b[0]) | uint32(b[n/2])<<8 | uint32(b[n-1])<<16 | uint32(b[n/3])<<24
		h ^= uint32(b[1%n])<<5 ^ uint32(b[n-1-n/4])<<13
	}
	h *= 0x85ebca6b
	e1, e2 := &c.ents[h>>23], &c.ents[(h>>7)&511]
	if e1.set && e1.key == string(b) {
		return int(e1.val)
	}
	if e2.set && e2.key == string(b) {
		return int(e2.val)
	}
	v := c.resolve([]byte(b)) // a miss: rare once the cache is warm
	if !e1.set {
		*e1 = keyEntry{key: string(b), val: int32(v), set: true}
	} else if !e2.set {
		*e2 = keyEntry{key: string(b), val: int32(v), set: true}
	}
	return v
}

// internMax bounds the interner: past it, new values are allocated, not cached, so many distinct
// names cost garbage, not memory growing with the day. The values that repeat most (cluster,
// node, namespace, node labels) come early and stay cached; allocation names, unique within an
// hour, rarely profit. 4k entries keep the interner a small part of the live heap at no
// measurable CPU cost (docs/performance.md, "Fewer, smaller buffers").
const internMax = 1 << 12

// interner returns one string per distinct value (names, namespaces and label values repeat
// across a day), up to internMax entries.
type interner map[string]string

func (in interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < internMax {
		in[s] = s
	}
	return s
}

// Member actions for the appended columns (schema.Extras): an allocation
// member maps to fieldExtra+index, a properties member to propExtra-index.
const (
	fieldExtra = 1 << 16
	propExtra  = -16
)

// extra reads appended column x into p.rec.X[x]; a null or a value of another shape leaves it null.
func (p *parser) extra(x int) {
	n := &p.rec.X[x]
	s := &p.sc
	switch p.extras[x].Type {
	case schema.NullableDouble:
		v := s.value()
		if v[0] == 'n' || v[0] == '{' || v[0] == '[' || v[0] == 't' || v[0] == 'f' {
			return
		}
		// Not a number: null, as 0 would claim a value Kubecost did not have.
		n.Num, n.Set = numberText(v, &p.unq)
	case schema.StringMap:
		if !s.enter('{') {
			return
		}
		n.Set = true
		p.stringMap(n)
	case schema.StringList:
		if !s.enter('[') {
			return
		}
		n.Set = true
		for s.elem() {
			n.List = append(n.List, p.strs.get(p.scalar()))
		}
	case schema.Struct:
		if !s.enter('{') {
			return
		}
		n.Set = true
		n.Entries = append(n.Entries[:0], schema.Entry{})
		p.structFields(x, &n.Entries[0])
	case schema.StructMap:
		if !s.enter('{') {
			return
		}
		n.Set = true
		for {
			k, ok := s.member()
			if !ok {
				return
			}
			key := p.strs.get(k)
			if !s.enter('{') {
				continue // a null entry: nothing to keep
			}
			n.Entries = append(n.Entries, schema.Entry{Key: key})
			p.structFields(x, &n.Entries[len(n.Entries)-1])
		}
	default:
		s.skip()
	}
}

// stringMap appends the members of the object just entered to n.KV. The previous allocation's
// entries are still in the slice's storage, and consecutive allocations mostly share them (the
// node's labels, the controller's), so a match there saves hashing into the interner.
func (p *parser) stringMap(n *schema.Nested) {
	s := &p.sc
	prev := n.KV[:cap(n.KV)]
	for i := 0; ; i++ {
		k, ok := s.member()
		if !ok {
			return
		}
		var kv schema.KV
		if kb := k; i < len(prev) && prev[i].Key == string(kb) {
			kv.Key = prev[i].Key
		} else {
			kv.Key = p.strs.get(kb)
		}
		if vb := p.scalar(); i < len(prev) && prev[i].Value == string(vb) {
			kv.Value = prev[i].Value
		} else {
			kv.Value = p.strs.get(vb)
		}
		n.KV = append(n.KV, kv)
	}
}

// structFields reads the members of the object just entered into e, by column x's field names.
func (p *parser) structFields(x int, e *schema.Entry) {
	s := &p.sc
	fields := p.extras[x].Fields
	for {
		k, ok := s.member()
		if !ok {
			return
		}
		f := slices.IndexFunc(fields, func(c schema.Column) bool { return c.Name == string(k) })
		if f < 0 {
			s.skip()
			continue
		}
		o := &e.Fields[f]
		v := s.value()
		switch c := v[0]; {
		case c == 'n' || c == '{' || c == '[':
		case fields[f].Type == schema.Bool:
			o.B, o.Set = c == 't', c == 't' || c == 'f'
		case fields[f].Type == schema.NullableString:
			if c == '"' {
				o.Str, o.Set = p.strs.get(s.text(v, &p.unq)), true
			}
		case fields[f].Type == schema.NullableDouble:
			if c != '"' && c != 't' && c != 'f' {
				o.Set, o.Num = schema.Finite(numberOf(v, &p.unq))
			}
		}
	}
}

// parseTime parses an RFC 3339 timestamp, YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM), into Unix
// milliseconds without allocating; odd shapes fall back to the time package.
func parseTime(b []byte) (int64, bool) {
	if len(b) >= 20 && b[4] == '-' && b[7] == '-' && (b[10] == 'T' || b[10] == 't' || b[10] == ' ') && b[13] == ':' && b[16] == ':' {
		y, ok1 := digits(b[0:4])
		mo, ok2 := digits(b[5:7])
		dd, ok3 := digits(b[8:10])
		h, ok4 := digits(b[11:13])
		mi, ok5 := digits(b[14:16])
		s, ok6 := digits(b[17:19])
		i, frac := 19, int64(0)
		if b[i] == '.' {
			i++
			for scale := int64(100); i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
				frac += int64(b[i]-'0') * scale
				scale /= 10
			}
		}
		off, ok7 := zone(b[i:])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 &&
			mo >= 1 && mo <= 12 && dd >= 1 && dd <= 31 && h < 24 && mi < 60 && s < 61 {
			days := daysFromCivil(y, mo, dd)
			return ((days*24+h)*60+mi-off)*60000 + s*1000 + frac, true
		}
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// zone parses Z or ±HH:MM into an offset in minutes east of UTC.
func zone(b []byte) (int64, bool) {
	if len(b) == 1 && (b[0] == 'Z' || b[0] == 'z') {
		return 0, true
	}
	if len(b) != 6 || (b[0] != '+' && b[0] != '-') || b[3] != ':' {
		return 0, false
	}
	h, ok1 := digits(b[1:3])
	m, ok2 := digits(b[4:6])
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return 0, false
	}
	if b[0] == '-' {
		return -(h*60 + m), true
	}
	return h*60 + m, true
}

func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
