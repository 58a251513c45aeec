package kubecost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
)

// escapedNames spells every member name the parser looks for with escapes,
// at every level: response, set key, allocation, properties, labels,
// window, the appended columns and their struct fields.
const escapedNames = `{"co\u0064e":200,"\u0064ata":[{"ns/p\u006fd/c":{` +
	`"n\u0061me":"ns/pod/\u0063","\u0074otalCost":7.5,"cpu\u0043ost":"1.25","minute\u0073":60,` +
	`"\u0070roperties":{"n\u0061mespace":"n\u0073","cluste\u0072":"c1","provider\u0049D":"i-1",` +
	`"\u006cabels":{"te\u0061m":"blue","node_kubernetes_io_instance_\u0074ype":"m5.large"},` +
	`"annot\u0061tions":{"own\u0065r":"alice"},"service\u0073":["web"],"namespace\u004cabels":{"a\u0062":"c"}},` +
	`"\u0077indow":{"\u0073tart":"2026-11-01T00:00:00Z","\u0065nd":"2026-11-01T01:00:00Z"},` +
	`"gpuUsage\u0041verage":0.5,"p\u0076s":{"pv\u002d1":{"c\u006fst":0.25,"provider\u0049D":"vol-1"}},` +
	`"rawAllocation\u004fnly":{"cpuCoreUsage\u004dax":0.75}}}]}`

// badStrings has lone surrogates and invalid UTF-8 in every kind of string
// the parser keeps: names, set keys, properties, label keys and values,
// list items, map keys and struct fields.
const badStrings = "{\"data\":[{\"k\\udc00\xff\":{" +
	"\"properties\":{\"namespace\":\"x\\udc00y\\ttab\",\"pod\":\"a\xffb\",\"node\":\"\\ud800\\u0041\"," +
	"\"labels\":{\"team\":\"\xe2\x82\",\"bad\\udfffkey\":\"v\",\"k\xc0\":\"\\ud83d\\ude00\"}," +
	"\"services\":[\"s\\ud800\"]},\"pvs\":{\"pv\\udc00\":{\"providerID\":\"p\xf5\"}},\"t\\u00e9\xffst\":1," +
	"\"\\u0074otal\\udc00Cost\":9}}]}"

// The exact cases of the issue, with the values that must be stored.
func TestDecodeValuesEscapesAndBadUTF8(t *testing.T) {
	p := testProjection()
	sink := decodeString(t, escapedNames)
	if len(sink.rows) != 1 {
		t.Fatalf("%d rows, want 1", len(sink.rows))
	}
	r := &sink.rows[0]
	num := func(n string) float64 { return r.Num[schema.DoubleIndex(n)] }
	ms := func(s string) int64 { t, _ := time.Parse(time.RFC3339, s); return t.UnixMilli() }
	for _, c := range []struct{ got, want any }{
		{r.Name, "ns/pod/c"}, {num("totalCost"), 7.5}, {num("cpuCost"), 1.25}, {num("minutes"), 60.0},
		{r.Props[schema.PropNamespace], "ns"}, {r.Props[schema.PropCluster], "c1"},
		{r.Props[schema.PropProvider], "AWS"}, {r.Props[schema.PropNodeInstanceType], "m5.large"},
		{p.UserLabel(r, 1), "blue"}, {p.UserAnnotation(r, 0), "alice"},
		{r.Start, ms("2026-11-01T00:00:00Z")}, {r.End, ms("2026-11-01T01:00:00Z")},
		{r.X[schema.XGPUUsageAverage].Num, 0.5}, {strings.Join(r.X[schema.XServices].List, ","), "web"},
		{kvMap(&r.X[schema.XNamespaceLabels])["ab"], "c"},
		{r.X[schema.XPVs].Entries[0].Key, "pv-1"}, {r.X[schema.XPVs].Entries[0].Fields[3].Str, "vol-1"},
		{r.X[schema.XRawAllocationOnly].Entries[0].Fields[0].Num, 0.75},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	if pv := r.X[schema.XPVs].Entries[0].Fields[2]; !pv.Set || pv.Num != 0.25 {
		t.Errorf("pv cost %+v, want 0.25", pv)
	}
	// An escaped "name" at the set level is the name too.
	sink = decodeString(t, `{"data":{"a\u002fb":{"cpuCost":1}}}`)
	if sink.rows[0].Name != "a/b" {
		t.Errorf("set key read as %q, want a/b", sink.rows[0].Name)
	}

	// Every bad string reads as encoding/json reads it: U+FFFD for each
	// invalid byte and each lone surrogate, the rest decoded.
	sink = decodeString(t, badStrings)
	r = &sink.rows[0]
	std := func(raw string) string {
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	labels := kvMap(&r.X[schema.XLabels])
	for _, c := range []struct{ got, raw string }{
		{r.Name, "\"k\\udc00\xff\""},
		{r.Props[schema.PropNamespace], `"x\udc00y\ttab"`},
		{r.Props[schema.PropPod], "\"a\xffb\""},
		{r.Props[schema.PropNode], `"\ud800\u0041"`},
		{p.UserLabel(r, 1), "\"\xe2\x82\""},
		{labels[std(`"bad\udfffkey"`)], `"v"`},
		{labels[std("\"k\xc0\"")], `"\ud83d\ude00"`},
		{r.X[schema.XServices].List[0], `"s\ud800"`},
		{r.X[schema.XPVs].Entries[0].Key, `"pv\udc00"`},
		{r.X[schema.XPVs].Entries[0].Fields[3].Str, "\"p\xf5\""},
	} {
		if want := std(c.raw); c.got != want {
			t.Errorf("%q read as %q, want %q (encoding/json)", c.raw, c.got, want)
		}
	}
	if got := r.Num[schema.DoubleIndex("totalCost")]; got != 0 {
		t.Errorf("a name with a lone surrogate matched totalCost: %v", got)
	}
}

// Numbers in strings follow JSON's grammar; the rest reads as 0 (or null
// in the nullable columns), except the NaN and infinity spellings, which
// Finish turns into 0 (null).
func TestDecodeNumbersInStrings(t *testing.T) {
	for _, c := range []struct {
		text string
		num  float64
		set  bool
	}{
		{`"1.5"`, 1.5, true}, {`"-2e3"`, -2000, true}, {`"0"`, 0, true}, {`"1e400"`, 0, false},
		{`"0x1p-2"`, 0, false}, {`"1_0"`, 0, false}, {`" 1"`, 0, false}, {`"1 "`, 0, false},
		{`"+1"`, 0, false}, {`"01"`, 0, false}, {`"1."`, 0, false}, {`".5"`, 0, false},
		{`"Inf"`, 0, false}, {`"NaN"`, 0, false}, {`"-Infinity"`, 0, false}, {`"infinit"`, 0, false},
		{`"\u0031\u002e5"`, 1.5, true}, {`""`, 0, false},
	} {
		sink := decodeString(t, `{"data":{"a":{"totalCost":`+c.text+`,"gpuUsageAverage":`+c.text+`}}}`)
		r := &sink.rows[0]
		if got := r.Num[schema.DoubleIndex("totalCost")]; got != c.num {
			t.Errorf("totalCost %s = %v, want %v", c.text, got, c.num)
		}
		if x := r.X[schema.XGPUUsageAverage]; x.Set != c.set || x.Num != c.num {
			t.Errorf("gpuUsageAverage %s = %v (set %v), want %v (set %v)", c.text, x.Num, x.Set, c.num, c.set)
		}
	}
}

// A value longer than the cap fails the response with an error naming the
// allocation, whether it is a value, a name or a number; the same value
// under the cap, or in a member the parser skips, is fine.
func TestDecodeValueCap(t *testing.T) {
	big := strings.Repeat("x", 5000)
	d := newDecoder(testProjection())
	d.p.sc.max = 4096
	for _, c := range []struct {
		body string
		fail bool
	}{
		{`{"data":{"ns/pod":{"properties":{"labels":{"team":"` + big + `"}}}}}`, true},
		{`{"data":{"ns/pod":{"properties":{"labels":{"` + big + `":"v"}}}}}`, true},
		{`{"data":{"ns/pod":{"totalCost":1` + strings.Repeat("0", 5000) + `}}}`, true},
		{`{"data":{"ns/pod":{"name":"` + big + `"}}}`, true},
		{`{"data":{"ns/pod":{"properties":{"labels":{"team":"` + big[:4000] + `"}}}}}`, false},
		{`{"data":{"ns/pod":{"unknown":"` + big + `","x":[{"y":"` + big + `"}]}}}`, false},
	} {
		for _, jagged := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.body)
			if jagged {
				r = &jaggedReader{r: r}
			}
			var sink memSink
			_, err := d.decode(r, testDay, time.Hour, &sink)
			if !c.fail {
				if err != nil {
					t.Errorf("%.60s...: %v", c.body, err)
				}
				continue
			}
			if !errors.Is(err, errValueTooLarge) || !strings.Contains(err.Error(), `allocation "ns/pod"`) ||
				!strings.Contains(err.Error(), "MAX_VALUE_BYTES") {
				t.Errorf("%.60s...: err = %v, want a too-large value naming allocation ns/pod", c.body, err)
			}
		}
	}
	// The window did not grow much past the cap.
	if n := cap(d.p.sc.b); n > 2*scanWindow {
		t.Errorf("window grew to %d bytes for a cap of 4096", n)
	}
}

// A value over MAX_VALUE_BYTES fails the day at once: it is not retried.
func TestClientValueTooLargeIsPermanent(t *testing.T) {
	var hits countingHandler
	hits.h = func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"code":200,"data":[{"ns/pod/c":{"properties":{"labels":{"team":"`)
		_, _ = io.WriteString(w, strings.Repeat("v", 3<<20))
		_, _ = io.WriteString(w, `"}}}}]}`)
	}
	srv := serve(t, hits.ServeHTTP)
	c, _ := newClient(t, srv.URL, nil)
	err := c.FetchDay(context.Background(), testDay, &memSink{})
	if err == nil || !strings.Contains(err.Error(), `allocation "ns/pod/c"`) || !strings.Contains(err.Error(), "MAX_VALUE_BYTES") {
		t.Fatalf("err = %v, want a too-large value naming the allocation", err)
	}
	if n := hits.count(); n != 1 {
		t.Errorf("%d requests, want 1: the same body would fail again", n)
	}
}

// stalledReader serves b, then blocks until it is closed: a server that
// stopped sending in the middle of a body.
type stalledReader struct {
	b      []byte
	closed chan struct{}
}

func (s *stalledReader) Read(p []byte) (int, error) {
	if len(s.b) > 0 {
		n := copy(p, s.b)
		s.b = s.b[n:]
		return n, nil
	}
	<-s.closed
	return 0, errors.New("read on closed body")
}

// A syntax error with the rest of the body stalled fails at once, as the
// syntax error: the decoder aborts the read before waiting for it.
func TestDecodeSyntaxErrorThenStall(t *testing.T) {
	body := &stalledReader{b: []byte(`{"code":200,"data":[{"a":{"name":"a"},"b":{"name":"b",,`), closed: make(chan struct{})}
	d := newDecoder(testProjection())
	d.abort = func() { close(body.closed) }
	start := time.Now()
	_, err := d.decode(body, testDay, time.Hour, &countingSink{})
	if el := time.Since(start); el > time.Second {
		t.Errorf("decode took %v", el)
	}
	if !errors.Is(err, errSyntax) || !strings.Contains(err.Error(), "invalid character ','") {
		t.Fatalf("err = %v, want the syntax error", err)
	}
}

// A sink error with the body stalled after it is reported at once, as the
// sink's error.
func TestDecodeSinkErrorThenStall(t *testing.T) {
	body := &stalledReader{b: []byte(`{"code":200,"data":[{"a":{"name":"a"},"b":{"name":"b"},`), closed: make(chan struct{})}
	d := newDecoder(testProjection())
	d.abort = func() { close(body.closed) }
	start := time.Now()
	n, err := d.decode(body, testDay, time.Hour, &countingSink{failAt: 2})
	if el := time.Since(start); el > time.Second {
		t.Errorf("decode took %v", el)
	}
	var se *sinkError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "disk full") || n != 1 {
		t.Fatalf("n=%d err=%v, want the sink's error after 1 row", n, err)
	}
}

// The same through the client, over HTTP: the server sends a malformed
// start and then nothing, with a read timeout of a minute.
func TestClientSyntaxErrorThenStall(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"code":200,"data":[{"a":{"name":"a","totalCost":1},"b":{"name":"b",,`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	// aggregate=controller: row "a", of no properties, is a whole answer
	// (the answer check reads no controller), and the syntax error after
	// it is what fails the response.
	c, _ := newClient(t, srv.URL, func(o *Options) { o.ReadTimeout, o.Retries, o.Aggregate = time.Minute, 0, "controller" })
	start := time.Now()
	err := c.FetchDay(context.Background(), testDay, &memSink{})
	if el := time.Since(start); el > time.Second {
		t.Errorf("FetchDay took %v after a syntax error", el)
	}
	if err == nil || !strings.Contains(err.Error(), "invalid character ','") || strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err = %v, want the syntax error", err)
	}
}

// fuzzSeeds are the inputs of the issue and the shapes around them.
var fuzzSeeds = []string{
	quirkyResponse, escapedNames, badStrings,
	`{"data":{"x\u0041":{"properties":{"labels":{"team":"\ud83d\ude00"}},"totalCost":"-Inf"}}}`,
	`{"data":[{"a":{"\u0074otalCost":7.5,"\u0070roperties":{"namespace":"n","\u006cabels":{"team":"t"}}}}]}`,
	`{"data":[{"a":{"\u006eame":"b","name":"\u0063"}}]}`,
	`{"co\u0064e":200,"\u0064ata":[{"a":{"totalCost":1}}]}`,
	`{"code":500,"message":"boom \udc00"}`,
	`{"data":[{"a":{"properties":{"namespace":"x\udc00y","pod":"tab\there"}}}]}`,
	"{\"data\":[{\"a\":{\"properties\":{\"namespace\":\"\xff\xfe\",\"labels\":{\"\xc3\":\"\xed\xa0\x80\"}}}}]}",
	`{"data":[{"a":{"totalCost":"0x1p-2","cpuCost":"1_0","ramCost":"1e5","gpuCost":" 1","gpuUsageAverage":"NaN"}}]}`,
	`{"data":[{"a":{"gpuAllocation":{"gpuModel":"\u0041","isGPUShared":true,"gpuUsageAverage":"1"},"lbAllocations":{"x":{"cost":1e999,"private":1}}}}]}`,
	`{"data":[null,{"a":{"window":{"start":"2026-11-01T00:00:00Z"},"start":"2026-11-01T05:00:00Z"}},3]}`,
	`{"data":{"a":{"pvs":{"p":null,"q":{"byteHours":-0}},"services":["a",1,true,null,{}]}},"data":[{"b":{}}]}`,
	`{"data":[{"a":{"properties":{"labels":{"team":"x"},"labels":null,"annotations":{"owner":[]}}}}]}`,
}

// FuzzDecode holds the decoder to the reference reading
// (reference_test.go), value for value: the same rows with the same names,
// numbers, properties, label slots and appended columns, map keys
// included, or an error for both. It reads each body whole and in reads
// of 1 to 13 bytes (their sequence starting at a phase taken from the
// body's length, so the fuzzer moves it too).
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	p := testProjection()
	d := newDecoder(p)
	f.Fuzz(func(t *testing.T, body []byte) {
		want := refDecode(body, p, testDay, time.Hour)
		for _, jagged := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(body)
			if jagged {
				r = &jaggedReader{r: r, k: len(body) % 13}
			}
			var sink memSink
			n, err := d.decode(r, testDay, time.Hour, &sink)
			if n != len(sink.rows) {
				t.Fatalf("returned %d, wrote %d", n, len(sink.rows))
			}
			if (err == nil) != (want.err == nil) {
				t.Fatalf("jagged=%v: decoder error %v, reference error %v: %q", jagged, err, want.err, body)
			}
			var ae *apiError
			if errors.As(err, &ae) && (ae.code != want.code || ae.message != want.message) {
				t.Fatalf("API error %d %q, want %d %q", ae.code, ae.message, want.code, want.message)
			}
			if err != nil {
				continue
			}
			if len(sink.rows) != len(want.rows) {
				t.Fatalf("jagged=%v: %d rows, want %d: %q", jagged, len(sink.rows), len(want.rows), body)
			}
			for i := range sink.rows {
				if diff := diffRecords(&sink.rows[i], &want.rows[i]); diff != "" {
					t.Fatalf("jagged=%v: row %d: %s\nbody %q", jagged, i, diff, body)
				}
			}
		}
	})
}

// repeatReader serves head, then n copies of c, then tail.
type repeatReader struct {
	head, tail []byte
	c          byte
	n          int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	switch {
	case len(r.head) > 0:
		k := copy(p, r.head)
		r.head = r.head[k:]
		return k, nil
	case r.n > 0:
		k := int(min(int64(len(p)), r.n))
		for i := range k {
			p[i] = r.c
		}
		r.n -= int64(k)
		return k, nil
	case len(r.tail) > 0:
		k := copy(p, r.tail)
		r.tail = r.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// One huge value costs a bounded amount of memory, whatever its size: a
// kept one fails at the cap (default MAX_VALUE_BYTES), a skipped one is
// walked. The bound counts every allocation of a fresh decoder, its
// read-ahead buffers included.
func TestDecodeHugeValueBoundedMemory(t *testing.T) {
	const huge = 200 << 20
	for _, c := range []struct {
		name       string
		head, tail string
		n          int64
		fail       bool
	}{
		{"label value", `{"data":{"ns/pod":{"properties":{"labels":{"team":"`, `"}}}}}`, huge, true},
		{"number", `{"data":{"ns/pod":{"totalCost":1`, `}}}`, huge, true},
		{"unknown member", `{"data":{"ns/pod":{"unknown":"`, `","totalCost":1}}}`, 64 << 20, false},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var sink memSink
		_, err := newDecoder(testProjection()).decode(&repeatReader{head: []byte(c.head), tail: []byte(c.tail), c: '7', n: c.n},
			testDay, time.Hour, &sink)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d MiB allocated, err %v", c.name, alloc>>20, err)
		if c.fail != errors.Is(err, errValueTooLarge) || !c.fail && err != nil {
			t.Errorf("%s: err = %v, want too large: %v", c.name, err, c.fail)
		}
		if alloc > 16<<20 {
			t.Errorf("%s: %d MiB allocated for one value", c.name, alloc>>20)
		}
	}
}

// The scanner notes whether a string is plain ASCII without escapes eight
// bytes at a time; an escape or a non-ASCII byte at any offset, in a name
// or a value, must still be decoded as encoding/json decodes it.
func TestDecodeStringsAtEveryOffset(t *testing.T) {
	for _, odd := range []string{"\xff", "\xc3\xa9", `\n`, `\u00e9`, `\udc00`, "\xe2\x82"} {
		for at := range 20 {
			raw := `"` + strings.Repeat("a", at) + odd + strings.Repeat("b", 20-at) + `"`
			var want string
			if err := json.Unmarshal([]byte(raw), &want); err != nil {
				t.Fatal(err)
			}
			sink := decodeString(t, `{"data":{"x":{"properties":{"labels":{`+raw+`:`+raw+`}}}}}`)
			kv := sink.rows[0].X[schema.XLabels].KV
			if len(kv) != 1 || kv[0].Key != want || kv[0].Value != want {
				t.Errorf("%s read as %q, want %q", raw, kv, want)
			}
		}
	}
}
