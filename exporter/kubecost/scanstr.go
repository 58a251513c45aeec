package kubecost

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The scanner's strings: moving past them, checking their escapes, and
// decoding them as encoding/json does.

// text returns the decoded contents of the string v that value just returned (see jsonString).
func (s *scanner) text(v []byte, scratch *[]byte) []byte {
	if s.plain {
		return v[1 : len(v)-1]
	}
	return jsonString(v, scratch)
}

// jsonString returns the contents of the raw JSON string quoted (quotes included, grammar
// checked) as encoding/json decodes it: escapes resolved, each invalid UTF-8 byte and lone
// surrogate escape replaced with U+FFFD. It copies into *scratch only when it must.
func jsonString(quoted []byte, scratch *[]byte) []byte {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return raw
	}
	// jsontext replaces what it cannot decode and reports it at the end: its output is complete.
	u, _ := jsontext.AppendUnquote((*scratch)[:0], quoted)
	*scratch = u
	return u
}

// Bytes of eight copies of a byte, for the string scan.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// str moves past the string at the current '"', looking eight bytes at a time for a closing
// quote, a backslash or a control character. It notes in s.plain whether the string is ASCII
// without escapes, the common case, which then needs no decoding or UTF-8 check (text, name):
// an OR per eight bytes instead of a second pass.
func (s *scanner) str() {
	b, i := s.b, s.i+1
	var hi uint64 // the bytes passed, ORed: a high bit means non-ASCII
	esc := false
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q, bs := x^(ones*'"'), x^(ones*'\\')
			// A byte is flagged when it is zero (q, bs) or below 0x20 (x).
			// The lowest flag is exact; flags above it may not be.
			t := ((q - ones) &^ q) | ((bs - ones) &^ bs) | ((x - ones*0x20) &^ x)
			if t &= highs; t != 0 {
				k := bits.TrailingZeros64(t) >> 3
				hi |= x & (1<<(8*k) - 1) // the bytes before the flagged one
				i += k
				break
			}
			hi |= x
			i += 8
		}
		for i < len(b) {
			c := b[i]
			switch {
			case c == '"':
				s.i = i + 1
				s.plain = !esc && hi&highs == 0
				return
			case c == '\\':
				esc = true
				s.i = i
				if !s.escape() {
					return
				}
				b, i = s.b, s.i
				continue
			case c < 0x20:
				s.i = i
				s.fail("no control characters in a string")
				return
			}
			hi |= uint64(c)
			i++
			if i+8 <= len(b) {
				break // back to eight at a time
			}
		}
		if i < len(b) {
			continue
		}
		s.i = i
		if !s.more() {
			s.fail("the end of the string")
			return
		}
		b, i = s.b, s.i
	}
}

// escape checks the escape at the current '\' and moves past it.
func (s *scanner) escape() bool {
	for len(s.b)-s.i < 6 && s.more() {
	}
	b := s.b[s.i:]
	if len(b) < 2 {
		s.i = len(s.b)
		s.fail("an escape")
		return false
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		for k := 2; k < 6; k++ {
			if k >= len(b) {
				s.i = len(s.b)
				s.fail("four hex digits")
				return false
			}
			if !isHex(b[k]) {
				s.i += k
				s.fail("a hex digit")
				return false
			}
		}
		s.i += 6
		return true
	}
	s.i++
	s.fail("an escape")
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
