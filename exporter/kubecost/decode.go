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

// The decoder walks an Allocation API response token by token with
// jsontext, one allocation at a time. On a 60 MB hourly day (bench_test.go)
// it decodes about 300 MB per CPU second, against 30 for encoding/json's
// Decoder.Token (which boxes every token), 260 for jsontext.ReadValue of
// each allocation followed by a hand-rolled scan of the validated bytes
// (two passes), and 580 for tokenizing alone. jsontext also validates as it
// goes, so a body cut short is an error, never a silently partial day.

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
	if err == nil {
		// Only white space may follow: anything else means the body is
		// not the response we think it is.
		if _, err = d.dec.ReadToken(); err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("unexpected data after the response object")
		}
	}
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
		case "code":
			f, err := d.number()
			if err != nil {
				return err
			}
			d.code = int(f)
		case "data":
			err = d.data(sink)
		case "message", "error":
			var s []byte
			if s, err = d.str(); err == nil && len(s) > 0 && d.message == "" {
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
		if err := d.allocation(); err != nil {
			return err
		}
		if err := sink.Write(d.rec); err != nil {
			return &sinkError{err}
		}
		d.n++
	}
}

func (d *decoder) allocation() error {
	r := d.rec
	d.proj.Reset(r)
	var wStart, wEnd, aStart, aEnd int64
	var hasW, hasA uint8 // bit 0: start, bit 1: end
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for {
		k, end, err := d.name()
		if err != nil {
			return err
		}
		if end {
			break
		}
		f := d.fields.get(k)
		switch {
		case f >= fieldDouble:
			r.Num[f-fieldDouble], err = d.number()
		case f == fieldName:
			var s []byte
			if s, err = d.str(); err == nil {
				r.Name = d.strs.get(s)
			}
		case f == fieldProperties:
			err = d.properties()
		case f == fieldWindow:
			err = d.window(&wStart, &wEnd, &hasW)
		case f == fieldStart:
			err = d.time(&aStart, &hasA, 1)
		case f == fieldEnd:
			err = d.time(&aEnd, &hasA, 2)
		default:
			err = d.skip()
		}
		if err != nil {
			return err
		}
	}
	if r.Name == "" {
		r.Name = d.strs.get(d.unquoteName(d.setKey))
	}
	// The allocation's own window wins, then its start/end, then the set's.
	fallback := d.start + d.set*d.step
	r.Start = pick(hasW&1 != 0, wStart, hasA&1 != 0, aStart, fallback)
	r.End = pick(hasW&2 != 0, wEnd, hasA&2 != 0, aEnd, fallback+d.step)
	d.proj.Finish(r)
	return nil
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

func (d *decoder) properties() error {
	if d.dec.PeekKind() != jsontext.KindBeginObject {
		return d.skip()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	r := d.rec
	for {
		k, end, err := d.name()
		if err != nil || end {
			return err
		}
		switch i := d.props.get(k); {
		case i >= 0:
			var s []byte
			if s, err = d.scalar(); err == nil {
				r.Props[i] = cached(&d.lastProps[i], s, &d.strs)
			}
		case i == propLabels:
			err = d.labelSet(&d.labels, r.Labels, d.lastLabels)
		case i == propAnnotations:
			err = d.labelSet(&d.annots, r.Annotations, d.lastAnnotations)
		default:
			err = d.skip()
		}
		if err != nil {
			return err
		}
	}
}

// labelSet fills the label (or annotation) slots the projection asks for;
// other keys are skipped without allocating.
func (d *decoder) labelSet(slots *keyCache, dst, last []string) error {
	if d.dec.PeekKind() != jsontext.KindBeginObject {
		return d.skip()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for {
		k, end, err := d.name()
		if err != nil || end {
			return err
		}
		slot := slots.get(k)
		if slot < 0 {
			if err := d.skip(); err != nil {
				return err
			}
			continue
		}
		s, err := d.scalar()
		if err != nil {
			return err
		}
		dst[slot] = cached(&last[slot], s, &d.strs)
	}
}

func (d *decoder) window(start, end *int64, has *uint8) error {
	if d.dec.PeekKind() != jsontext.KindBeginObject {
		return d.skip()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return err
	}
	for {
		k, e, err := d.name()
		if err != nil || e {
			return err
		}
		switch string(k) {
		case "start":
			err = d.time(start, has, 1)
		case "end":
			err = d.time(end, has, 2)
		default:
			err = d.skip()
		}
		if err != nil {
			return err
		}
	}
}

// time reads an RFC 3339 timestamp into *ms and sets bit in *has. Other
// shapes and unparsable strings leave both untouched.
func (d *decoder) time(ms *int64, has *uint8, bit uint8) error {
	s, err := d.str()
	if err != nil {
		return err
	}
	if len(s) == 0 {
		return nil
	}
	if t, ok := parseTime(s); ok {
		*ms, *has = t, *has|bit
	}
	return nil
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

// str reads a string value; other kinds read as "". The bytes are valid
// until the next read.
func (d *decoder) str() ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil || len(v) == 0 || v[0] != '"' {
		return nil, err
	}
	return d.unquote(v), nil
}

// scalar reads a string, number or boolean as its text; null and
// composites read as "".
func (d *decoder) scalar() ([]byte, error) {
	v, err := d.dec.ReadValue()
	if err != nil || len(v) == 0 {
		return nil, err
	}
	switch v[0] {
	case '"':
		return d.unquote(v), nil
	case 'n', '{', '[':
		return nil, nil
	}
	return v, nil
}

// number reads a JSON number, or a string holding one (Kubecost writes
// "NaN" and infinities as strings). Anything else reads as 0, and so does
// an unparsable string; Projection.Finish zeroes NaN and infinities.
func (d *decoder) number() (float64, error) {
	v, err := d.dec.ReadValue()
	if err != nil || len(v) == 0 {
		return 0, err
	}
	switch c := v[0]; {
	case c == '"':
		v = bytes.TrimSpace(d.unquote(v))
	case c != '-' && (c < '0' || c > '9'):
		return 0, nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, nil
	}
	return f, nil
}

// unquote returns the contents of a raw JSON string, copying only when it
// has escapes.
func (d *decoder) unquote(v jsontext.Value) []byte {
	if len(v) < 2 || v[0] != '"' {
		return v
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	u, err := jsontext.AppendUnquote(d.unq[:0], v)
	if err != nil {
		return v[1 : len(v)-1]
	}
	d.unq = u
	return u
}

// unquoteName unescapes a raw member name saved by allocationSet.
func (d *decoder) unquoteName(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	q := append(append(append(d.unq[:0], '"'), raw...), '"')
	d.unq = q
	u, err := jsontext.AppendUnquote(nil, q) // rare: names are pod paths
	if err != nil {
		return raw
	}
	return u
}

// skip discards the next value. ReadValue scans a composite in one tight
// loop, which measured faster than SkipValue's token by token walk; the
// largest skipped value (pvs, proportionalAssetResourceCosts) is small.
func (d *decoder) skip() error {
	_, err := d.dec.ReadValue()
	return err
}
