package kubecost

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The decoder streams an Allocation API response one allocation at a time
// with jsontext's token API. BenchmarkDecode* (bench_test.go) measured it
// about ten times faster than encoding/json's Decoder.Token, which boxes
// every token. jsontext also validates as it goes, so a body cut short is
// an error, never a silently partial day.

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
	br     *bufio.Reader // sniffs the body before dec reads it
	dec    jsontext.Decoder
	proj   *schema.Projection
	rec    *schema.Record
	fields keyCache // allocation member -> field*
	props  keyCache // properties member -> Props index, or propLabels/propAnnotations
	labels keyCache // label key -> Record.Labels slot
	annots keyCache // annotation key -> Record.Annotations slot
	strs   interner
	unq    []byte // scratch for strings with escapes
	setKey []byte // the current allocation's raw key in its set

	// The previous allocation's values, by slot: consecutive allocations
	// mostly share cluster, node, namespace and node labels, and comparing
	// with the last value is cheaper than hashing into the interner.
	lastProps       [schema.NumProps]string
	lastLabels      []string
	lastAnnotations []string

	// Per response.
	code    int
	message string
	// fallback window of set i: [start+i*step, start+(i+1)*step), used when
	// an allocation carries no window at all.
	start, step int64
	set         int64
	n           int
}

func newDecoder(p *schema.Projection) *decoder {
	fields := map[string]int{"name": fieldName, "properties": fieldProperties, "window": fieldWindow, "start": fieldStart, "end": fieldEnd}
	for i, n := range schema.DoubleNames() {
		fields[n] = fieldDouble + i
	}
	r := p.NewRecord()
	d := &decoder{
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
			return -1
		}},
		labels:          keyCache{resolve: func(k []byte) int { return p.LabelSlot(string(k)) }},
		annots:          keyCache{resolve: func(k []byte) int { return p.AnnotationSlot(string(k)) }},
		strs:            interner{m: make(map[string]string, 1024), max: 1 << 15},
		lastLabels:      make([]string, len(r.Labels)),
		lastAnnotations: make([]string, len(r.Annotations)),
	}
	return d
}

// Pseudo property indexes for the nested label and annotation objects.
const (
	propLabels      = -2
	propAnnotations = -3
)

// decode reads one response from r and writes each allocation to sink. The
// window [start, start+len) split by step is the fallback when allocations
// carry no window. It returns the number of allocations written, also on
// error: a caller that sees n > 0 with an error must reset the sink.
func (d *decoder) decode(r io.Reader, start time.Time, step time.Duration, sink exporter.RecordSink) (int, error) {
	d.dec.Reset(r, decoderOptions...)
	d.code, d.message, d.n, d.set = 0, "", 0, 0
	d.start, d.step = start.UnixMilli(), step.Milliseconds()
	err := d.response(sink)
	if err == nil && d.code != 0 && d.code != 200 {
		err = &apiError{d.code, d.message}
	}
	return d.n, err
}

func (d *decoder) response(sink exporter.RecordSink) error {
	if err := d.begin(jsontext.KindBeginObject); err != nil {
		return err
	}
	for {
		k, end, err := d.name()
		if err != nil || end {
			return err
		}
		switch string(k) {
		case "code", "message", "error":
			v, err := d.dec.ReadValue()
			if err != nil {
				return err
			}
			s := scanner{b: v}
			if string(k) == "code" {
				d.code = int(d.number(&s))
			} else if m := d.scalar(&s); len(m) > 0 && d.message == "" {
				d.message = string(m[:min(len(m), 512)])
			}
		case "data":
			err = d.data(sink)
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
func (d *decoder) data(sink exporter.RecordSink) error {
	switch d.dec.PeekKind() {
	case jsontext.KindBeginObject:
		return d.allocationSet(sink)
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
			if err := d.allocationSet(sink); err != nil {
				return err
			}
		default:
			if err := d.dec.SkipValue(); err != nil {
				return err
			}
		}
	}
}

func (d *decoder) allocationSet(sink exporter.RecordSink) error {
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for {
		k, end, err := d.name()
		if err != nil || end {
			return err
		}
		d.setKey = append(d.setKey[:0], k...) // raw: unquoted only if "name" is missing
		if d.dec.PeekKind() != jsontext.KindBeginObject {
			if err := d.dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		// jsontext validates the whole allocation in one pass, then the
		// scanner walks the validated bytes without further checks.
		v, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		d.allocation(v)
		if err := sink.Write(d.rec); err != nil {
			return &sinkError{err}
		}
		d.n++
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
