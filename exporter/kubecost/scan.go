package kubecost

import "bytes"

// scanner walks one allocation object that jsontext has already validated
// (ReadValue in the reading stage). Because the bytes are known to be
// well-formed JSON, it checks nothing and never needs to look past a value:
// it only finds where names and values start and end, which is what makes
// the parsing stage about twice as fast per byte as a second jsontext pass.
//
// Every method assumes it is positioned where the JSON grammar allows the
// call (a member name or the end of an object, a value); the parser calls
// them in that order only.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) reset(b []byte) { s.b, s.i = b, 0 }

// ws skips white space. Kubecost writes none, but a proxy that re-indents
// the body must not break the parser.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the first byte of the next value: '{', '[', '"', 'n', 't',
// 'f', '-' or a digit.
func (s *scanner) peek() byte {
	s.ws()
	return s.b[s.i]
}

// enter consumes the '{' of an object if the next value is one. Otherwise
// it skips the value and reports false, as the jsontext walk did for
// members of an unexpected shape.
func (s *scanner) enter() bool {
	if s.peek() == '{' {
		s.i++
		return true
	}
	s.skip()
	return false
}

// member returns the raw name of the next member of the current object
// (without quotes, escapes kept) and moves past its colon, or reports
// false and consumes the '}' at the end of the object.
func (s *scanner) member() ([]byte, bool) {
	s.ws()
	if s.b[s.i] == ',' {
		s.i++
		s.ws()
	}
	if s.b[s.i] == '}' {
		s.i++
		return nil, false
	}
	start := s.i + 1
	end := stringEnd(s.b, start)
	s.i = end + 1
	s.ws()
	s.i++ // ':'
	return s.b[start:end], true
}

// value returns the raw text of the next value, as jsontext.ReadValue does.
func (s *scanner) value() []byte {
	s.ws()
	start := s.i
	s.skip()
	return s.b[start:s.i]
}

// skip moves past the next value.
func (s *scanner) skip() {
	s.ws()
	b := s.b
	switch b[s.i] {
	case '"':
		s.i = stringEnd(b, s.i+1) + 1
	case '{', '[':
		depth := 0
		for i := s.i; ; i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i+1)
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i = i + 1
					return
				}
			}
		}
	default: // number, true, false, null: up to the next delimiter
		i := s.i + 1
		for i < len(b) && !isDelim(b[i]) {
			i++
		}
		s.i = i
	}
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// stringEnd returns the index of the quote that closes the string whose
// contents start at i. A quote preceded by an odd run of backslashes is
// escaped; the run cannot extend before the opening quote.
func stringEnd(b []byte, i int) int {
	for {
		q := i + bytes.IndexByte(b[i:], '"')
		k := q
		for b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// elem moves to the next element of the array whose '[' was consumed, or
// reports false and consumes the ']' at its end.
func (s *scanner) elem() bool {
	s.ws()
	if s.b[s.i] == ',' {
		s.i++
		s.ws()
	}
	if s.b[s.i] == ']' {
		s.i++
		return false
	}
	return true
}
