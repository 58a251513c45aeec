package kubecost

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// allocation fills d.rec from one allocation object that jsontext has
// already validated. Walking valid JSON needs no error handling, so this
// scanner is a few tight loops; it measured about twice as fast as
// walking the same bytes token by token through jsontext.
func (d *decoder) allocation(v []byte) {
	r := d.rec
	d.proj.Reset(r)
	s := scanner{b: v}
	var wStart, wEnd, aStart, aEnd int64
	var hasW, hasA uint8 // bit 0: start, bit 1: end
	s.enter()
	for {
		k, ok := s.member()
		if !ok {
			break
		}
		switch f := d.fields.get(k); {
		case f >= fieldDouble:
			r.Num[f-fieldDouble] = d.number(&s)
		case f == fieldName:
			r.Name = d.strs.get(d.scalar(&s))
		case f == fieldProperties:
			d.properties(&s)
		case f == fieldWindow:
			if s.enter() {
				for {
					k, ok := s.member()
					if !ok {
						break
					}
					switch string(k) {
					case "start":
						d.time(&s, &wStart, &hasW, 1)
					case "end":
						d.time(&s, &wEnd, &hasW, 2)
					default:
						s.skip()
					}
				}
			}
		case f == fieldStart:
			d.time(&s, &aStart, &hasA, 1)
		case f == fieldEnd:
			d.time(&s, &aEnd, &hasA, 2)
		default:
			s.skip()
		}
	}
	if r.Name == "" {
		r.Name = d.strs.get(d.unescape(d.setKey))
	}
	// The allocation's own window wins, then its start/end, then the set's.
	fallback := d.start + d.set*d.step
	r.Start = pick(hasW&1 != 0, wStart, hasA&1 != 0, aStart, fallback)
	r.End = pick(hasW&2 != 0, wEnd, hasA&2 != 0, aEnd, fallback+d.step)
	d.proj.Finish(r)
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

func (d *decoder) properties(s *scanner) {
	if !s.enter() {
		return
	}
	r := d.rec
	for {
		k, ok := s.member()
		if !ok {
			return
		}
		switch i := d.props.get(k); {
		case i >= 0:
			r.Props[i] = cached(&d.lastProps[i], d.scalar(s), &d.strs)
		case i == propLabels:
			d.labelSet(s, &d.labels, r.Labels, d.lastLabels)
		case i == propAnnotations:
			d.labelSet(s, &d.annots, r.Annotations, d.lastAnnotations)
		default:
			s.skip()
		}
	}
}

// labelSet fills the label (or annotation) slots the projection asks for;
// other keys are skipped without allocating.
func (d *decoder) labelSet(s *scanner, slots *keyCache, dst, last []string) {
	if !s.enter() {
		return
	}
	for {
		k, ok := s.member()
		if !ok {
			return
		}
		if slot := slots.get(k); slot >= 0 {
			dst[slot] = cached(&last[slot], d.scalar(s), &d.strs)
		} else {
			s.skip()
		}
	}
}

// time reads an RFC 3339 timestamp into *ms and sets bit in *has. Other
// shapes and unparsable strings leave both untouched.
func (d *decoder) time(s *scanner, ms *int64, has *uint8, bit uint8) {
	if v := d.scalar(s); len(v) > 0 {
		if t, ok := parseTime(v); ok {
			*ms, *has = t, *has|bit
		}
	}
}

// scalar reads a string (unescaped), number or boolean as its text; null
// and composites read as nil. The bytes are valid until the next read.
func (d *decoder) scalar(s *scanner) []byte {
	switch s.peek() {
	case '"':
		return d.unescape(s.str())
	case '{', '[', 'n':
		s.skip()
		return nil
	}
	return s.literal()
}

// number reads a JSON number, or a string holding one (Kubecost writes
// "NaN" and infinities as strings). Anything else reads as 0, and so does
// an unparsable string; Projection.Finish zeroes NaN and infinities.
func (d *decoder) number(s *scanner) float64 {
	var v []byte
	switch c := s.peek(); {
	case c == '"':
		v = bytes.TrimSpace(d.unescape(s.str()))
	case c == '-' || c >= '0' && c <= '9':
		v = s.literal()
	default:
		s.skip()
		return 0
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return f
}

// unescape returns the contents of a raw string (between its quotes),
// copying only when it has escapes.
func (d *decoder) unescape(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	d.unq = append(append(append(d.unq[:0], '"'), raw...), '"')
	u, err := jsontext.AppendUnquote(d.unq[len(d.unq):], d.unq)
	if err != nil {
		return raw
	}
	return u
}

// scanner walks a JSON value that jsontext has already validated: every
// byte it expects is there, so it checks nothing and never fails. Bounds
// are still respected, so a bug shows as a wrong value, not a panic.
type scanner struct {
	b []byte
	i int
}

// peek skips white space and returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// enter consumes the '{' of an object. For any other value it skips it
// and returns false.
func (s *scanner) enter() bool {
	if s.peek() == '{' {
		s.i++
		return true
	}
	s.skip()
	return false
}

// member returns the raw name of the next member of the current object,
// leaving the scanner at its value, or false after consuming the '}'.
// Names are not unescaped: every name looked up is a plain identifier
// (label keys are sanitized to [a-zA-Z0-9_]), and an escaped name matches
// none of them, as it should.
func (s *scanner) member() ([]byte, bool) {
	c := s.peek()
	if c == ',' {
		s.i++
		c = s.peek()
	}
	if c != '"' {
		s.i++ // '}'
		return nil, false
	}
	k := s.str()
	if s.peek() == ':' {
		s.i++
	}
	return k, true
}

// str consumes a string and returns its raw contents, escapes included.
func (s *scanner) str() []byte {
	start := s.i + 1
	j := start
	for j < len(s.b) {
		q := bytes.IndexByte(s.b[j:], '"')
		if q < 0 {
			j = len(s.b)
			break
		}
		j += q
		n := 0 // backslashes before the quote: odd means it is escaped
		for p := j - 1; p >= start && s.b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			break
		}
		j++
	}
	s.i = min(j+1, len(s.b))
	return s.b[start:min(j, len(s.b))]
}

// literal consumes a number, true, false or null and returns its text.
func (s *scanner) literal() []byte {
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return s.b[start:s.i]
		}
	}
	return s.b[start:]
}

// skip consumes any value.
func (s *scanner) skip() {
	switch s.peek() {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return
			}
		}
	default:
		s.literal()
	}
}
