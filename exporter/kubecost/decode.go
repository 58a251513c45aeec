package kubecost

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The decoder reads an Allocation API response in two stages joined by a
// bounded channel (pipeline.go), so that decoding uses both cores while
// the sink's own goroutine encodes Parquet:
//
//   - reading (the caller's goroutine): a jsontext walk down to the
//     allocation sets, then ReadValue of each allocation, which validates
//     it in one tight loop, a little faster than tokenizing it. The raw
//     bytes are copied into a pooled batch.
//   - parsing (one goroutine per response): a scanner of the validated
//     bytes (scan.go) fills a schema.Record per allocation (parse.go) and
//     writes it to the sink, in the order of the body.
//
// The two stages together cost about the same CPU as the single
// token-by-token pass they replaced, but on two cores neither is the
// slowest part of the exporter any more (figures: "Decoding on two cores"
// in docs/performance.md; bench_test.go measures them). Validation stays
// with jsontext, so a body cut short is an error, never a silently
// partial day.

// decoderOptions: a duplicate name is not an error (the last one wins, as
// with encoding/json), and UTF-8 is not checked: neither matters to the
// columns, and both checks cost time.
var decoderOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
}

// sinkError marks an error returned by the sink, which is never retried.
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

// decoder holds the reusable state for decoding responses. It is not safe
// for concurrent use; the Client pools them.
type decoder struct {
	br   *bufio.Reader // sniffs the body before dec reads it
	dec  jsontext.Decoder
	unq  []byte // scratch for the reading stage's strings with escapes
	pipe *pipeline
	p    *parser

	// Per response.
	code    int
	message string
	set     int64
}

func newDecoder(p *schema.Projection) *decoder {
	return &decoder{p: newParser(p), pipe: newPipeline()}
}

// decode reads one response from r and writes each allocation to sink. The
// window [start, start+len) split by step is the fallback when allocations
// carry no window. It returns the number of allocations written, also on
// error: a caller that sees n > 0 with an error must reset the sink. Every
// write to sink has happened when decode returns.
func (d *decoder) decode(r io.Reader, start time.Time, step time.Duration, sink exporter.RecordSink) (int, error) {
	d.dec.Reset(r, decoderOptions...)
	d.code, d.message, d.set = 0, "", 0
	d.p.start, d.p.step = start.UnixMilli(), step.Milliseconds()
	d.pipe.begin(d.p, sink)
	err := d.response()
	if err == nil {
		// Only white space may follow: anything else means the body is
		// not the response we think it is.
		if _, err = d.dec.ReadToken(); err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("unexpected data after the response object")
		}
	}
	// The allocations read before an error still reach the sink, as they
	// did when one goroutine did everything: the caller's count of written
	// rows decides whether the sink must be reset.
	n, serr := d.pipe.end()
	if serr != nil {
		return n, &sinkError{serr}
	}
	if err == nil && d.code != 0 && d.code != 200 {
		err = &apiError{d.code, d.message}
	}
	return n, err
}

func (d *decoder) response() error {
	if err := d.begin(jsontext.KindBeginObject); err != nil {
		return err
	}
	for {
		k, end, err := d.name()
		if err != nil || end {
			return err
		}
		switch string(k) {
		case "code":
			var v jsontext.Value
			if v, err = d.dec.ReadValue(); err == nil {
				d.code = int(numberOf(v, &d.unq))
			}
		case "data":
			err = d.data()
		case "message", "error":
			var v jsontext.Value
			if v, err = d.dec.ReadValue(); err == nil && len(v) > 0 && v[0] == '"' && d.message == "" {
				s := unquote(v, &d.unq)
				d.message = string(s[:min(len(s), 512)])
			}
		default:
			err = d.dec.SkipValue() // may be large: walk it, do not buffer it
		}
		if err != nil {
			return err
		}
	}
}

// data is normally an array of sets, one per step; null sets are skipped.
// A bare set object is accepted as well.
func (d *decoder) data() error {
	switch d.dec.PeekKind() {
	case jsontext.KindBeginObject:
		return d.allocationSet()
	case jsontext.KindBeginArray:
	default:
		return d.dec.SkipValue()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for ; ; d.set++ {
		switch d.dec.PeekKind() {
		case jsontext.KindEndArray:
			_, err := d.dec.ReadToken()
			return err
		case jsontext.KindBeginObject:
			if err := d.allocationSet(); err != nil {
				return err
			}
		default:
			if err := d.dec.SkipValue(); err != nil {
				return err
			}
		}
	}
}

// allocationSet hands each allocation of a set, raw, to the parsing stage.
func (d *decoder) allocationSet() error {
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for {
		k, end, err := d.name()
		if err != nil || end {
			return err
		}
		if d.dec.PeekKind() != jsontext.KindBeginObject {
			if _, err := d.dec.ReadValue(); err != nil {
				return err
			}
			continue
		}
		// k is only valid until the next read: keep a copy before ReadValue.
		d.pipe.key(k)
		v, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		if err := d.pipe.add(d.set, v); err != nil {
			return err
		}
	}
}

// begin reads the opening token of a value of kind k.
func (d *decoder) begin(k jsontext.Kind) error {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != k {
		return fmt.Errorf("expected %v, found %v", k, tok.Kind())
	}
	return nil
}

// name reads the next member name of the current object, or its end. The
// bytes are valid until the next read. Names are not unescaped: every name
// the decoder looks for is a plain identifier (label keys are sanitized to
// [a-zA-Z0-9_]), and an escaped name matches none of them, as it should.
func (d *decoder) name() (name []byte, end bool, err error) {
	if d.dec.PeekKind() == jsontext.KindEndObject {
		_, err = d.dec.ReadToken()
		return nil, true, err
	}
	v, err := d.dec.ReadValue()
	if err != nil || len(v) < 2 {
		return nil, false, err
	}
	return v[1 : len(v)-1], false, nil
}

// unquote returns the contents of a raw JSON string, copying into *scratch
// only when it has escapes.
func unquote(v []byte, scratch *[]byte) []byte {
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	u, err := jsontext.AppendUnquote((*scratch)[:0], v)
	if err != nil {
		return v[1 : len(v)-1]
	}
	*scratch = u
	return u
}

// numberOf reads a raw JSON number, or a string holding one (Kubecost
// writes "NaN" and infinities as strings). Anything else reads as 0, and
// so does an unparsable string; Projection.Finish zeroes NaN and
// infinities.
func numberOf(v []byte, scratch *[]byte) float64 {
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '"':
		v = bytes.TrimSpace(unquote(v, scratch))
	case c != '-' && (c < '0' || c > '9'):
		return 0
	}
	// Longer numbers cannot have at most 15 digits: do not scan them twice.
	if len(v) <= 17 {
		if f, ok := smallNumber(v); ok {
			return f
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return f
}
