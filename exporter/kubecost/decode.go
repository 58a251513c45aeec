package kubecost

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The decoder reads an Allocation API response in one pass on the caller's goroutine: the
// scanner (scan.go) checks the grammar and finds names and values, and the parser (parse.go)
// fills a schema.Record per allocation, which goes to the sink at once. The sink's own goroutine
// encodes Parquet, so the two cores split the work between JSON and Parquet.
//
// Only a complete, well-formed allocation reaches the sink: a body cut short or malformed is an
// error at the allocation it breaks, never a silently partial day. (A separate jsontext check
// pass was about a fifth of the exporter's CPU: docs/performance.md, "One pass".)

// sinkError marks an error of the sink, which is never retried.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }

// apiError is a well-formed response whose "code" is not 200.
type apiError struct {
	code    int
	message string
}

func (e *apiError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("response code %d", e.code)
	}
	return fmt.Sprintf("response code %d: %s", e.code, e.message)
}

// decoder is the reusable state of decoding responses, not safe for concurrent use (pooled).
type decoder struct {
	br  *bufio.Reader // sniffs the body before the scanner reads it
	key []byte        // the set key of the allocation being parsed
	p   *parser
	ra  *readAhead
	// abort, when set, cancels the request, so a pending Read of the body returns. decode calls it
	// on an error before waiting for the read-ahead: else a body that stalls after a syntax error
	// would hold the error until the read timeout, and be reported as stalled.
	abort func()

	// Per response.
	sink    exporter.RecordSink
	n       int
	code    int
	message string
	set     int64
}

func newDecoder(p *schema.Projection) *decoder {
	return &decoder{br: bufio.NewReaderSize(nil, 64<<10), p: newParser(p), ra: newReadAhead()}
}

// decode reads one response from r and writes each allocation to sink; sets of step from start
// are the window of allocations without one. It returns the number written, also on error: a
// caller that sees n > 0 with an error must reset the sink.
func (d *decoder) decode(r io.Reader, start time.Time, step time.Duration, sink exporter.RecordSink) (_ int, err error) {
	s := &d.p.sc
	d.ra.start(r)
	s.reset(d.ra)
	defer func() {
		if err != nil && d.abort != nil {
			d.abort()
		}
		d.ra.stop() // the body is the caller's again
		s.src = nil
	}()
	d.sink, d.n, d.code, d.message, d.set = sink, 0, 0, "", 0
	d.p.start, d.p.step = start.UnixMilli(), step.Milliseconds()
	err = d.response()
	if err == nil {
		err = s.end()
		if errors.Is(err, errSyntax) {
			err = fmt.Errorf("unexpected data after the response object: %w", err)
		}
	}
	d.sink = nil
	if err == nil && d.code != 0 && d.code != 200 {
		err = &apiError{d.code, d.message}
	}
	return d.n, err
}

func (d *decoder) response() error {
	s := &d.p.sc
	if c := s.peek(); c != '{' {
		if s.err != nil {
			return s.err
		}
		return fmt.Errorf("%w: expected an object, found %q", errSyntax, c)
	}
	s.open()
	for {
		k, ok := s.member()
		if !ok {
			return s.err
		}
		switch string(k) {
		case "code":
			d.code = int(numberOf(s.value(), &d.p.unq))
		case "data":
			if err := d.data(); err != nil {
				return err
			}
		case "message", "error":
			if v := s.value(); v[0] == '"' && d.message == "" {
				u := jsonString(v, &d.p.unq)
				d.message = string(u[:min(len(u), 512)])
			}
		default:
			s.skip() // may be large: walked, not buffered
		}
	}
}

// data is normally an array of sets, one per step (null ones skipped), or a bare set.
func (d *decoder) data() error {
	s := &d.p.sc
	switch s.peek() {
	case '{':
		return d.allocationSet()
	case '[':
	default:
		s.skip()
		return s.err
	}
	s.open()
	for ; s.elem(); d.set++ {
		if s.peek() != '{' {
			s.skip()
			continue
		}
		if err := d.allocationSet(); err != nil {
			return err
		}
	}
	return s.err
}

func (d *decoder) allocationSet() error {
	s := &d.p.sc
	s.open()
	for {
		k, ok := s.member()
		if !ok {
			return s.err
		}
		// The key is valid until the next read: peek may refill the window.
		d.key = append(d.key[:0], k...)
		if s.peek() != '{' {
			s.skip()
			continue
		}
		d.p.allocation(d.key, d.set)
		if s.err != nil {
			// The allocation is incomplete: not written.
			return fmt.Errorf("allocation %q: %w", sanitize(string(d.key), 256), s.err)
		}
		if err := d.sink.Write(d.p.rec); err != nil {
			return &sinkError{err}
		}
		d.n++
	}
}

// numberOf reads a raw JSON number, or a string holding one (Kubecost writes "NaN" and
// infinities as strings); anything else reads as 0. Projection.Finish zeroes NaN and infinities.
func numberOf(v []byte, scratch *[]byte) float64 {
	f, _ := numberText(v, scratch)
	return f
}

// numberText is numberOf that also reports whether v held a number. A string must hold exactly
// a JSON number (no white space, hex, '+' or '_'), or a spelling of NaN or an infinity.
func numberText(v []byte, scratch *[]byte) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	switch c := v[0]; {
	case c == '"':
		v = jsonString(v, scratch)
		if !isNumber(v) {
			return nonFinite(v)
		}
	case c != '-' && (c < '0' || c > '9'):
		return 0, false
	}
	// The common short forms are exact without strconv (see exactDecimal).
	if m, nd, frac, n, _ := decimal(v); n == len(v) && nd <= 19 {
		if f, ok := exactDecimal(m, frac, v[0] == '-'); ok {
			return f, true
		}
	}
	return parseFloat(v), true
}

// nonFinite reads strconv.ParseFloat's spellings of NaN and infinities, without its error
// allocation for the rest.
func nonFinite(v []byte) (float64, bool) {
	w, sign := string(v), 1
	if len(w) > 0 && (w[0] == '+' || w[0] == '-') {
		if w[0] == '-' {
			sign = -1
		}
		w = w[1:] // a sign only before an infinity
	} else if strings.EqualFold(w, "nan") {
		return math.NaN(), true
	}
	if strings.EqualFold(w, "inf") || strings.EqualFold(w, "infinity") {
		return math.Inf(sign), true
	}
	return 0, false
}

// isNumber reports whether v is exactly a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(v []byte) bool {
	_, _, _, i, ok := decimal(v)
	if ok && i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := i
		for j < len(v) && isDigit(v[j]) {
			j++
		}
		ok, i = j > i, j
	}
	return ok && i == len(v)
}

// parseFloat is strconv's, with a number out of range read as its limit (infinity or zero) and
// anything unparsable as 0. Its callers pass only JSON numbers.
func parseFloat(v []byte) float64 {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return f
}
