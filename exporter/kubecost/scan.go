package kubecost

import (
	"cmp"
	"errors"
	"fmt"
	"io"
)

// scanner reads a response body once, checking JSON's grammar as it goes, and hands the parser
// the names and values it asks for: one pass, as a separate check first (jsontext's ReadValue)
// cost about as much CPU as tokenizing, and the body is the largest thing the exporter touches.
//
// It checks what jsontext checks with AllowInvalidUTF8 and AllowDuplicateNames (scan_test.go's
// FuzzScanner holds it to that): objects, arrays, commas and colons; number syntax; true, false
// and null; strings closed, without raw control characters and with valid escapes; nesting at
// most maxDepth; only white space after the response. A body cut anywhere is io.ErrUnexpectedEOF.
//
// The body is read into a window refilled as the scanner moves, keeping only what the current
// token (or pin) needs, so a returned name or value is valid until the next call. Member names
// are returned decoded ("\u0074otalCost" is totalCost, as to encoding/json; see jsonString).
//
// A string, number or literal the parser keeps may be at most max bytes of JSON text: the window
// grows to hold such a token whole, so one huge label would take several times its size in
// memory (errValueTooLarge). Skipped values are walked, never held, so they need no cap.
//
// Once an error is recorded every method returns "the end" at once (member and elem false, value
// null), so the parser's loops unwind without checks; the caller checks err.
type scanner struct {
	b     []byte               // the window: b[i:] is unread
	i     int                  // next byte
	pin   int                  // start of a token that must survive a refill, or -1
	src   io.Reader            // where more bytes come from; nil: b is everything
	off   int64                // offset in the body of b[0], for error messages
	eof   bool                 // src is exhausted
	err   error                // first error: syntax, cut short or src's
	first bool                 // just inside '{' or '[': no comma before the next item
	depth int                  // containers open outside skip
	max   int                  // the most bytes of one kept token; 0 before reset: DefaultMaxValueBytes
	names []byte               // scratch for member names that need decoding
	plain bool                 // the last string str passed has no escape and is ASCII
	pow   *[maxFrac + 1]pow128 // for float; kept across resets
}

const (
	// scanWindow is the scanner's read size: fewer system calls; a refill moves at most one token.
	scanWindow = 256 << 10
	// maxDepth is jsontext's nesting limit.
	maxDepth = 10000
)

// DefaultMaxValueBytes is the default cap on one string or number token (MAX_VALUE_BYTES), in
// bytes of JSON text as the scanner holds them (counting decoded bytes would mean decoding on the
// hot path). Kubernetes allows 256 KiB for all of an object's annotations, and a \uXXXX escape
// per byte makes that 1.5 MiB on the wire: above it, no legal value fails a day, while a runaway
// one costs a few MiB, not GiB.
const DefaultMaxValueBytes = 2 << 20

// errSyntax marks the scanner's own grammar errors.
var errSyntax = errors.New("invalid JSON")

// errValueTooLarge marks a string or number longer than the scanner's cap.
var errValueTooLarge = errors.New("value too large")

var nullText = []byte("null")

// reset starts reading src, reusing the window.
func (s *scanner) reset(src io.Reader) {
	if cap(s.b) < scanWindow || cap(s.b) > 4*scanWindow {
		// A window grown by one huge token must not stay that size.
		s.b = make([]byte, 0, scanWindow)
	}
	*s = scanner{b: s.b[:0], pin: -1, src: src, max: cmp.Or(s.max, DefaultMaxValueBytes), names: s.names[:0], pow: s.pow}
}

// tooLarge records errValueTooLarge for the token pinned at s.pin.
func (s *scanner) tooLarge() {
	if s.err == nil {
		s.err = fmt.Errorf("%w: a string or number of more than %d bytes at offset %d (MAX_VALUE_BYTES)",
			errValueTooLarge, s.max, s.off+int64(s.pin))
	}
}

// more reads into the window, keeping b[min(i, pin):]; false at the body's end or on an error.
func (s *scanner) more() bool {
	if s.eof || s.err != nil {
		return false
	}
	keep := s.i
	if s.pin >= 0 && s.pin < keep {
		keep = s.pin
	}
	if keep > 0 {
		n := copy(s.b[:cap(s.b)], s.b[keep:])
		s.b = s.b[:n]
		s.i -= keep
		if s.pin >= 0 {
			s.pin -= keep
		}
		s.off += int64(keep)
	}
	if len(s.b) == cap(s.b) {
		// One kept token fills the window: grow it, up to the cap.
		if s.pin >= 0 && len(s.b)-s.pin > s.max {
			s.tooLarge()
			return false
		}
		s.b = append(s.b, 0)[:len(s.b)]
	}
	for {
		n, err := s.src.Read(s.b[len(s.b):cap(s.b)])
		s.b = s.b[:len(s.b)+n]
		switch {
		case err == io.EOF:
			s.eof = true
			return n > 0
		case err != nil:
			s.err = err
			return false
		case n > 0:
			return true
		}
	}
}

// fail records a syntax error at the current byte (or the end) unless one is recorded.
func (s *scanner) fail(want string) {
	if s.err != nil {
		return
	}
	if s.i >= len(s.b) {
		s.err = io.ErrUnexpectedEOF
		return
	}
	s.err = fmt.Errorf("%w: invalid character %q at offset %d: want %s", errSyntax, s.b[s.i], s.off+int64(s.i), want)
}

// ws skips white space and reports whether a byte follows: Kubecost writes none, a proxy might.
func (s *scanner) ws() bool {
	for {
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ' ', '\t', '\n', '\r':
				s.i++
			default:
				return true
			}
		}
		if !s.more() {
			return false
		}
	}
}

// peek returns the first byte of the next value, or 0 after an error.
func (s *scanner) peek() byte {
	// The fast path inlines: Kubecost writes no white space.
	if s.i < len(s.b) && s.b[s.i] > ' ' && s.err == nil {
		return s.b[s.i]
	}
	return s.peekSlow()
}

func (s *scanner) peekSlow() byte {
	if s.err != nil || !s.ws() {
		s.fail("a JSON value or delimiter") // at the end: io.ErrUnexpectedEOF
		return 0
	}
	if s.b[s.i] == 0 {
		// 0 means "error" to every caller; a NUL byte is never JSON here.
		s.fail("a JSON value or delimiter")
		return 0
	}
	return s.b[s.i]
}

// enter consumes the opening '{' or '[' if the next value starts with it; else it skips the
// value and reports false.
func (s *scanner) enter(open byte) bool {
	if s.peek() == open {
		return s.open()
	}
	s.skip()
	return false
}

func (s *scanner) open() bool {
	if s.depth++; s.depth > maxDepth {
		s.fail("less nesting")
		return false
	}
	s.i++
	s.first = true
	return true
}

// next moves to the next item of the container entered last, past its comma, or, reporting
// false, past the closing byte.
func (s *scanner) next(close byte) bool {
	c := s.peek()
	if s.first {
		s.first = false
	} else if c == ',' {
		s.i++
		c = s.peek()
		if c == close {
			s.fail("a value after ','")
			return false
		}
		return c != 0
	} else if c != close {
		s.fail(fmt.Sprintf("',' or '%c'", close))
		return false
	}
	if c == close {
		s.i++
		s.depth--
		return false
	}
	return c != 0
}

// member returns the decoded name of the current object's next member and moves past its colon,
// or reports false and consumes the '}'. The name is valid until the next call (copy it before
// peeking).
func (s *scanner) member() ([]byte, bool) {
	if !s.next('}') {
		return nil, false
	}
	if s.b[s.i] != '"' {
		s.fail("a member name")
		return nil, false
	}
	s.pin = s.i
	s.str()
	end := s.i - 1 // the closing quote
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		// The name must outlive the refill that finding its colon may need.
		if s.peek() != ':' {
			s.fail("':'")
			s.pin = -1
			return nil, false
		}
		for end = s.i - 1; s.b[end] != '"'; end-- { // white space before the colon
		}
	}
	if end+1-s.pin > s.max {
		s.tooLarge()
	}
	s.i++
	quoted := s.b[s.pin : end+1]
	s.pin = -1
	if s.err != nil {
		return nil, false
	}
	if s.plain {
		return quoted[1 : len(quoted)-1], true
	}
	return jsonString(quoted, &s.names), true
}

// elem moves to the next element of the array entered last, or reports false past its ']'.
func (s *scanner) elem() bool { return s.next(']') }

// value returns the raw text of the next string, number or literal, or null after an error. An
// object or array is walked, not held, and reads as null: no caller keeps one.
func (s *scanner) value() []byte {
	if c := s.peek(); c == '{' || c == '[' || c == 0 {
		s.skip()
		return nullText
	}
	s.pin = s.i
	s.skip()
	start := s.pin
	if s.err == nil && s.i-start > s.max {
		s.tooLarge()
	}
	s.pin = -1
	if s.err != nil {
		return nullText
	}
	return s.b[start:s.i]
}

// skip moves past the next value, checking it.
func (s *scanner) skip() {
	switch s.peek() {
	case '{', '[':
		s.composite()
	case '"':
		s.str()
	default:
		s.scalar()
	}
	s.first = false
}

// scalar moves past a number or a literal.
func (s *scanner) scalar() {
	switch s.peek() {
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	case 0:
	default:
		s.number()
	}
}

func (s *scanner) literal(lit string) {
	for len(s.b)-s.i < len(lit) && s.more() {
	}
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		if s.err == nil && len(s.b)-s.i < len(lit) && string(s.b[s.i:]) == lit[:len(s.b)-s.i] {
			s.err = io.ErrUnexpectedEOF
		}
		s.fail(lit)
		return
	}
	s.i += len(lit)
}

// number moves past -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; the caller checks what follows.
func (s *scanner) number() {
	if s.at() == '-' {
		s.i++
	}
	switch c := s.at(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		s.fail("a digit")
		return
	}
	if s.at() == '.' {
		s.i++
		if !isDigit(s.at()) {
			s.fail("a digit after '.'")
			return
		}
		s.digits()
	}
	if c := s.at(); c == 'e' || c == 'E' {
		s.i++
		if c := s.at(); c == '+' || c == '-' {
			s.i++
		}
		if !isDigit(s.at()) {
			s.fail("a digit in the exponent")
			return
		}
		s.digits()
	}
}

// at returns the current byte, reading more if needed, or 0 at the end.
func (s *scanner) at() byte {
	if s.i < len(s.b) || s.more() {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) digits() {
	for {
		for s.i < len(s.b) && isDigit(s.b[s.i]) {
			s.i++
		}
		if s.i < len(s.b) || !s.more() {
			return
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// composite moves past the object or array at the current byte, checking all of it.
func (s *scanner) composite() {
	closer := s.b[s.i] + 2 // '{'+2 is '}', '['+2 is ']'
	if !s.open() {
		return
	}
	if s.peek() == closer { // an empty container
		s.i++
		s.depth--
		return
	}
	for {
		if closer == '}' && !s.name() {
			return
		}
		s.skip()
		switch s.peek() {
		case closer:
			s.i++
			s.depth--
			return
		case ',':
			s.i++
		default:
			s.fail(fmt.Sprintf("',' or '%c'", closer))
			return
		}
	}
}

// name moves past a member name and its colon inside skip.
func (s *scanner) name() bool {
	if s.peek() != '"' {
		s.fail("a member name")
		return false
	}
	s.str()
	if s.peek() != ':' {
		s.fail("':'")
		return false
	}
	s.i++
	return true
}

// end checks that only white space is left.
func (s *scanner) end() error {
	if s.err == nil && s.ws() {
		s.fail("the end of the body")
	}
	return s.err
}
