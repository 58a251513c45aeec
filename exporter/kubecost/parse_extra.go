package kubecost

import (
	"slices"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// Member actions for the appended columns (schema.Extras): an allocation
// member maps to fieldExtra+index, a properties member to propExtra-index.
const (
	fieldExtra = 1 << 16
	propExtra  = -16
)

// extra reads the value of appended column x into p.rec.X[x]. A null, or a
// value of another shape than the column's, leaves the column null.
func (p *parser) extra(x int) {
	n := &p.rec.X[x]
	s := &p.sc
	switch p.extras[x].Type {
	case schema.NullableDouble:
		v := s.value()
		if v[0] == 'n' || v[0] == '{' || v[0] == '[' || v[0] == 't' || v[0] == 'f' {
			return
		}
		// A string that is not a number leaves the column null: 0 would
		// claim a value Kubecost did not have.
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

// stringMap appends the members of the object just entered to n.KV. The
// entries of the previous allocation are still in the slice's storage, and
// consecutive allocations mostly share keys and values (the node's labels,
// the controller's), so a match there saves hashing into the interner.
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

// structFields reads the members of the object just entered into e, by
// the field names of column x; other members are skipped.
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
