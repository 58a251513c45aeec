package kubecost

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// The reference reading of a response: what the allocations hold when the
// body is read with jsontext (tokens, decoded names and strings) and
// numbers with strconv, following the rules the parser documents: which
// members are kept, which shapes are ignored, the last duplicate winning.
// The fuzzers hold the scanner and parser to it value for value. It shares
// no code with them except parseTime (timestamps are tested on their own,
// TestParseTime) and schema.Projection's slots and Finish.

// jnode is a JSON value with its object members in body order.
type jnode struct {
	kind    jsontext.Kind // 'n', 't', 'f', '"', '0', '{', '['
	text    string        // a string decoded; a number as written
	members []jmember
	elems   []*jnode
}

type jmember struct {
	name string
	val  *jnode
}

// readTree reads one JSON value from dec.
func readTree(dec *jsontext.Decoder) (*jnode, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	n := &jnode{kind: tok.Kind()}
	switch n.kind {
	case '"', '0':
		n.text = tok.String()
	case '{':
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // valid only until the next read
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jmember{name, v})
		}
		_, err = dec.ReadToken()
	case '[':
		for dec.PeekKind() != ']' {
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		_, err = dec.ReadToken()
	}
	return n, err
}

// refResult is the reference reading of a body: its rows, or an error.
type refResult struct {
	rows    []schema.Record
	err     error
	code    int
	message string
}

var errRefShape = errors.New("reference: the response is not an object")

// refDecode reads body as the decoder must.
func refDecode(body []byte, p *schema.Projection, start time.Time, step time.Duration) refResult {
	dec := jsontext.NewDecoder(bytes.NewReader(body), decoderOptions...)
	root, err := readTree(dec)
	if err == nil {
		_, err = dec.ReadToken()
		if err == nil {
			err = errors.New("reference: data after the response")
		} else if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return refResult{err: err}
	}
	if root.kind != '{' {
		return refResult{err: errRefShape}
	}
	var res refResult
	set := int64(0)
	r := &refReader{p: p, start: start.UnixMilli(), step: step.Milliseconds()}
	for _, m := range root.members {
		switch m.name {
		case "code":
			res.code = int(refNumber(m.val))
		case "data":
			switch m.val.kind {
			case '{':
				res.rows = append(res.rows, r.set(m.val, set)...)
			case '[':
				for _, e := range m.val.elems {
					if e.kind == '{' {
						res.rows = append(res.rows, r.set(e, set)...)
					}
					set++
				}
			}
		case "message", "error":
			if m.val.kind == '"' && res.message == "" {
				res.message = m.val.text[:min(len(m.val.text), 512)]
			}
		}
	}
	if res.code != 0 && res.code != 200 {
		res.err = fmt.Errorf("response code %d", res.code)
	}
	return res
}

type refReader struct {
	p           *schema.Projection
	start, step int64
}

func (rr *refReader) set(n *jnode, set int64) []schema.Record {
	var out []schema.Record
	for _, m := range n.members {
		if m.val.kind == '{' {
			out = append(out, rr.allocation(m.name, m.val, set))
		}
	}
	return out
}

func (rr *refReader) allocation(key string, n *jnode, set int64) schema.Record {
	r := rr.p.NewRecord()
	var wStart, wEnd, aStart, aEnd int64
	var hasW, hasA uint8
	for _, m := range n.members {
		if i := schema.DoubleIndex(m.name); i >= 0 {
			r.Num[i] = refNumber(m.val)
			continue
		}
		if x := schema.ExtraKey(m.name, false); x >= 0 {
			refExtra(&r.X[x], x, m.val)
			continue
		}
		switch m.name {
		case "name":
			r.Name = ""
			if m.val.kind == '"' {
				r.Name = m.val.text
			}
		case "properties":
			rr.properties(r, m.val)
		case "window":
			if m.val.kind == '{' {
				for _, w := range m.val.members {
					switch w.name {
					case "start":
						refTime(w.val, &wStart, &hasW, 1)
					case "end":
						refTime(w.val, &wEnd, &hasW, 2)
					}
				}
			}
		case "start":
			refTime(m.val, &aStart, &hasA, 1)
		case "end":
			refTime(m.val, &aEnd, &hasA, 2)
		}
	}
	if r.Name == "" {
		r.Name = key
	}
	fallback := rr.start + set*rr.step
	r.Start = pick(hasW&1 != 0, wStart, hasA&1 != 0, aStart, fallback)
	r.End = pick(hasW&2 != 0, wEnd, hasA&2 != 0, aEnd, fallback+rr.step)
	rr.p.Finish(r)
	return *r
}

func (rr *refReader) properties(r *schema.Record, n *jnode) {
	if n.kind != '{' {
		return
	}
	for _, m := range n.members {
		switch m.name {
		case "labels":
			refLabels(m.val, &r.X[schema.XLabels], r.Labels, rr.p.LabelSlot)
			continue
		case "annotations":
			refLabels(m.val, &r.X[schema.XAnnotations], r.Annotations, rr.p.AnnotationSlot)
			continue
		}
		if i, ok := schema.KubecostPropIndex(m.name); ok {
			r.Props[i] = refScalar(m.val)
		} else if x := schema.ExtraKey(m.name, true); x >= 0 {
			refExtra(&r.X[x], x, m.val)
		}
	}
}

// refLabels keeps every member of a label object in all, and the values
// of the keys the projection has slots for.
func refLabels(n *jnode, all *schema.Nested, dst []string, slot func(string) int) {
	if n.kind != '{' {
		return
	}
	all.Set = true
	for _, m := range n.members {
		v := refScalar(m.val)
		all.KV = append(all.KV, schema.KV{Key: m.name, Value: v})
		if s := slot(m.name); s >= 0 {
			dst[s] = v
		}
	}
}

// refScalar is a property's text: a string decoded, a number or boolean
// as written, anything else "".
func refScalar(n *jnode) string {
	switch n.kind {
	case '"', '0':
		return n.text
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return ""
}

// refNumberOK reads a number, or a string holding exactly a JSON number or
// a spelling of NaN or infinity that strconv accepts.
func refNumberOK(n *jnode) (float64, bool) {
	switch n.kind {
	case '0':
		f, err := strconv.ParseFloat(n.text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			panic(err) // jsontext accepted it
		}
		return f, true
	case '"':
		s := n.text
		if s != "" && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && s[len(s)-1] >= '0' && s[len(s)-1] <= '9' &&
			jsontext.Value(s).IsValid() {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				panic(err)
			}
			return f, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return f, true
		}
	}
	return 0, false
}

func refNumber(n *jnode) float64 {
	f, _ := refNumberOK(n)
	return f
}

func refTime(n *jnode, ms *int64, has *uint8, bit uint8) {
	if n.kind != '"' || n.text == "" {
		return
	}
	if t, ok := parseTime([]byte(n.text)); ok {
		*ms, *has = t, *has|bit
	}
}

// refExtra reads appended column x from n.
func refExtra(out *schema.Nested, x int, n *jnode) {
	col := schema.Extras()[x]
	switch col.Type {
	case schema.NullableDouble:
		switch n.kind {
		case '0', '"':
			out.Num, out.Set = refNumberOK(n)
		}
	case schema.StringMap:
		if n.kind == '{' {
			out.Set = true
			for _, m := range n.members {
				out.KV = append(out.KV, schema.KV{Key: m.name, Value: refScalar(m.val)})
			}
		}
	case schema.StringList:
		if n.kind == '[' {
			out.Set = true
			for _, e := range n.elems {
				out.List = append(out.List, refScalar(e))
			}
		}
	case schema.Struct:
		if n.kind == '{' {
			out.Set = true
			out.Entries = []schema.Entry{{}}
			refStruct(&out.Entries[0], col.Fields, n)
		}
	case schema.StructMap:
		if n.kind == '{' {
			out.Set = true
			for _, m := range n.members {
				if m.val.kind == '{' {
					out.Entries = append(out.Entries, schema.Entry{Key: m.name})
					refStruct(&out.Entries[len(out.Entries)-1], col.Fields, m.val)
				}
			}
		}
	}
}

func refStruct(e *schema.Entry, fields []schema.Column, n *jnode) {
	for _, m := range n.members {
		f := -1
		for i, c := range fields {
			if c.Name == m.name {
				f = i
				break
			}
		}
		if f < 0 {
			continue
		}
		o, k := &e.Fields[f], m.val.kind
		if k == 'n' || k == '{' || k == '[' {
			continue
		}
		switch fields[f].Type {
		case schema.Bool:
			o.B, o.Set = k == 't', k == 't' || k == 'f'
		case schema.NullableString:
			if k == '"' {
				o.Str, o.Set = m.val.text, true
			}
		case schema.NullableDouble:
			if k == '0' {
				o.Num = refNumber(m.val)
				o.Set, o.Num = schema.Finite(o.Num)
			}
		}
	}
}

// diffRecords describes the first difference between two rows, or "".
func diffRecords(got, want *schema.Record) string {
	switch {
	case got.Name != want.Name:
		return fmt.Sprintf("name %q, want %q", got.Name, want.Name)
	case got.Start != want.Start || got.End != want.End:
		return fmt.Sprintf("window %d..%d, want %d..%d", got.Start, got.End, want.Start, want.End)
	}
	for i := range got.Num {
		if math.Float64bits(got.Num[i]) != math.Float64bits(want.Num[i]) {
			return fmt.Sprintf("%s = %v, want %v", schema.DoubleNames()[i], got.Num[i], want.Num[i])
		}
	}
	for i := range got.Props {
		if got.Props[i] != want.Props[i] {
			return fmt.Sprintf("properties.%s = %q, want %q", schema.PropName(i), got.Props[i], want.Props[i])
		}
	}
	if !slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Annotations, want.Annotations) {
		return fmt.Sprintf("label slots %q %q, want %q %q", got.Labels, got.Annotations, want.Labels, want.Annotations)
	}
	for i := range got.X {
		if d := diffNested(&got.X[i], &want.X[i]); d != "" {
			return schema.Extras()[i].Name + ": " + d
		}
	}
	return ""
}

func diffNested(got, want *schema.Nested) string {
	if got.Set != want.Set || math.Float64bits(got.Num) != math.Float64bits(want.Num) {
		return fmt.Sprintf("set %v num %v, want set %v num %v", got.Set, got.Num, want.Set, want.Num)
	}
	if !slices.Equal(got.KV, want.KV) {
		return fmt.Sprintf("map %q, want %q", got.KV, want.KV)
	}
	if !slices.Equal(got.List, want.List) {
		return fmt.Sprintf("list %q, want %q", got.List, want.List)
	}
	if len(got.Entries) != len(want.Entries) {
		return fmt.Sprintf("%d entries, want %d", len(got.Entries), len(want.Entries))
	}
	for i := range got.Entries {
		g, w := got.Entries[i], want.Entries[i]
		if g.Key != w.Key {
			return fmt.Sprintf("entry key %q, want %q", g.Key, w.Key)
		}
		for f := range g.Fields {
			a, b := g.Fields[f], w.Fields[f]
			if a.Set != b.Set || a.Str != b.Str || a.B != b.B || math.Float64bits(a.Num) != math.Float64bits(b.Num) {
				return fmt.Sprintf("entry %q field %d = %+v, want %+v", g.Key, f, a, b)
			}
		}
	}
	return ""
}
