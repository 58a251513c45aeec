package kubecost

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// bigBody is a response many scanner windows long (about 5 MB).
func bigBody(t testing.TB) []byte {
	t.Helper()
	sim := kubecostsim.New(kubecostsim.Config{
		Seed: 5, ContainersPerHour: 80, Now: func() time.Time { return testDay.Add(10 * 24 * time.Hour) },
		Quirks: kubecostsim.Quirks{ExtraFields: true, NullNumbers: true, NegativeZero: true, NaNStrings: true, OffsetTimes: true},
	})
	var b bytes.Buffer
	if err := sim.WriteResponse(&b, benchQuery()); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 8*scanWindow {
		t.Fatalf("body of %d bytes fills too few windows", b.Len())
	}
	return b.Bytes()
}

// jaggedReader returns reads of 1 to 13 bytes, so that every token of a
// body crosses a window refill somewhere.
type jaggedReader struct {
	r io.Reader
	k int
}

func (j *jaggedReader) Read(p []byte) (int, error) {
	j.k = (j.k*7 + 3) % 13
	return j.r.Read(p[:min(len(p), j.k+1)])
}

// Reads of any size give the same rows: the window's refills keep every
// name and value whole wherever the reads end.
func TestDecodeAnyReadSizes(t *testing.T) {
	body := bigBody(t)
	var want memSink
	d := newDecoder(testProjection())
	n, err := d.decode(bytes.NewReader(body), testDay, time.Hour, &want)
	if err != nil || n != len(want.rows) || n < 1000 {
		t.Fatalf("whole: n=%d rows=%d err=%v", n, len(want.rows), err)
	}
	for name, r := range map[string]io.Reader{
		"one byte": iotest.OneByteReader(bytes.NewReader(body)),
		"jagged":   &jaggedReader{r: bytes.NewReader(body)},
		"half":     iotest.HalfReader(bytes.NewReader(body)),
		"data+EOF": iotest.DataErrReader(bytes.NewReader(body)),
	} {
		var got memSink
		n, err := d.decode(r, testDay, time.Hour, &got)
		if err != nil || n != len(want.rows) {
			t.Fatalf("%s: n=%d err=%v, want %d rows", name, n, err, len(want.rows))
		}
		for i := range want.rows {
			if !sameRecord(&want.rows[i], &got.rows[i]) {
				t.Fatalf("%s: row %d differs: %q@%d vs %q@%d", name, i, want.rows[i].Name, want.rows[i].Start, got.rows[i].Name, got.rows[i].Start)
			}
		}
	}
}

func sameRecord(a, b *schema.Record) bool {
	if a.Name != b.Name || a.Start != b.Start || a.End != b.End || a.Num != b.Num || a.Props != b.Props ||
		!slicesEqual(a.Labels, b.Labels) || !slicesEqual(a.Annotations, b.Annotations) {
		return false
	}
	for i := range a.X {
		x, y := &a.X[i], &b.X[i]
		if x.Set != y.Set || x.Num != y.Num || len(x.KV) != len(y.KV) || len(x.List) != len(y.List) || len(x.Entries) != len(y.Entries) {
			return false
		}
		for j := range x.KV {
			if x.KV[j] != y.KV[j] {
				return false
			}
		}
	}
	return true
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// countingSink counts writes and can fail from the failAt-th on.
type countingSink struct {
	n      int64
	failAt int64
}

func (s *countingSink) Write(*schema.Record) error {
	if s.n++; s.failAt > 0 && s.n >= s.failAt {
		return errors.New("disk full")
	}
	return nil
}

func (s *countingSink) Reset() error { return nil }

// A body cut deep into the response: the allocations before the cut are
// written (so the caller resets the sink), the count is exact, and the
// decoder is reusable afterwards.
func TestDecodeTruncatedBody(t *testing.T) {
	body := bigBody(t)
	d := newDecoder(testProjection())
	for _, cut := range []int{len(body) / 3, len(body) - 10} {
		sink := &countingSink{}
		n, err := d.decode(bytes.NewReader(body[:cut]), testDay, time.Hour, sink)
		if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: err = %v, want unexpected EOF", cut, err)
		}
		if n == 0 || int64(n) != sink.n {
			t.Errorf("cut at %d: returned %d, wrote %d", cut, n, sink.n)
		}
	}
	var all memSink
	n, err := d.decode(bytes.NewReader(body), testDay, time.Hour, &all)
	if err != nil || n != len(all.rows) || n < 1000 {
		t.Fatalf("after truncations: n=%d rows=%d err=%v", n, len(all.rows), err)
	}
}

// A read error is the decoder's error, not a syntax error.
func TestDecodeReadError(t *testing.T) {
	body := bigBody(t)
	boom := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(boom))
	n, err := newDecoder(testProjection()).decode(r, testDay, time.Hour, &countingSink{})
	if !errors.Is(err, boom) || n == 0 {
		t.Fatalf("n=%d err=%v, want the read error after some rows", n, err)
	}
}

// A sink error stops reading at once and is reported as such; nothing
// reads the body after decode returns (the caller drains and closes it).
func TestDecodeSinkErrorStopsReading(t *testing.T) {
	body := bigBody(t)
	sink := &countingSink{failAt: 10}
	r := &countingReader{r: bytes.NewReader(body)}
	n, err := newDecoder(testProjection()).decode(r, testDay, time.Hour, sink)
	r.closed.Store(true)
	var se *sinkError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the sink's error", err)
	}
	if n != 9 {
		t.Errorf("returned %d, want the 9 rows written before the failure", n)
	}
	// At most the read-ahead buffers and the scanner's window.
	if max := int64(aheadBufs*aheadSize + scanWindow); r.n.Load() > max {
		t.Errorf("read %d of %d bytes before the sink failed; want at most %d", r.n.Load(), len(body), max)
	}
	time.Sleep(10 * time.Millisecond)
	if r.late.Load() {
		t.Error("the body was read after decode returned")
	}
}

type countingReader struct {
	r      io.Reader
	n      atomic.Int64
	closed atomic.Bool
	late   atomic.Bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.closed.Load() {
		c.late.Store(true)
	}
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// resetBytes scans b alone.
func (s *scanner) resetBytes(b []byte) {
	*s = scanner{b: b, pin: -1, eof: true, max: cmp.Or(s.max, DefaultMaxValueBytes), names: s.names[:0], pow: s.pow}
}

// scanAll checks b as one JSON value with the scanner, reading it whole
// or in jagged reads.
func scanAll(b []byte, jagged bool) error {
	var s scanner
	if jagged {
		s.reset(&jaggedReader{r: bytes.NewReader(b)})
	} else {
		s.resetBytes(b)
	}
	s.skip()
	return s.end()
}

// The scanner accepts exactly what jsontext accepts with decoderOptions,
// and in valid JSON finds the same values and member names.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(quirkyResponse))
	f.Add([]byte(`{"a\"b\\":"x\\\"","":[],"c":{"d":[1,-2.5e3,true,false,null,"\u0041"]}}`))
	f.Add([]byte(` { "a" : 1 , "b" : [ ] } `))
	f.Add([]byte(`[1,]`))
	f.Add([]byte(`{"a":01}`))
	f.Add([]byte(`"\ud800"`))
	f.Add([]byte("\"a\tb\""))
	f.Add([]byte(`[[[[{"a":[{}]}]]]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := jsontext.Value(b).IsValid(decoderOptions...)
		for _, jagged := range []bool{false, true} {
			if err := scanAll(b, jagged); (err == nil) != valid {
				t.Fatalf("jagged=%v: scanner error %v, jsontext valid %v: %q", jagged, err, valid, b)
			}
		}
		if !valid {
			return
		}
		var s scanner
		s.resetBytes(b)
		v := s.value()
		if want := bytes.TrimSpace(b); want[0] == '{' || want[0] == '[' {
			if string(v) != "null" || s.err != nil {
				t.Fatalf("composite value read as %q (err %v), want it skipped", v, s.err)
			}
		} else if !bytes.Equal(v, want) {
			t.Fatalf("value %q, want %q", v, want)
		}
		if bytes.TrimSpace(b)[0] != '{' {
			return
		}
		// Member names and values, one level down, read in jagged reads.
		dec := jsontext.NewDecoder(bytes.NewReader(b), decoderOptions...)
		if _, err := dec.ReadToken(); err != nil {
			t.Fatal(err)
		}
		s.reset(&jaggedReader{r: bytes.NewReader(b)})
		if !s.enter('{') {
			t.Fatal("enter failed on an object")
		}
		for {
			k, ok := s.member()
			if dec.PeekKind() == '}' {
				if ok {
					t.Fatalf("scanner found member %q after the end", k)
				}
				return
			}
			tok, err := dec.ReadToken()
			if err != nil {
				t.Fatal(err)
			}
			// Names compare decoded: jsontext's reading, escapes resolved
			// and invalid UTF-8 replaced.
			name := tok.String() // valid only until the next read
			if !ok || string(k) != name {
				t.Fatalf("member %q, want %q", k, name)
			}
			val, err := dec.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			if k := val.Kind(); k == '{' || k == '[' {
				val = jsontext.Value("null")
			}
			if got := s.value(); !bytes.Equal(got, val) {
				t.Fatalf("member %q: value %q, want %q", name, got, val)
			}
		}
	})
}

// The plain decimals numberText converts without strconv read as strconv
// reads them.
func TestExactDecimal(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "60", "0.025", "64401427", "1.5", "-2.75", "123456789012345", "0.000000000000001",
		"9007199254740993", "0.1", "0.3", "1234567.891", ".5", "5.", "1e3", "0x10", "", "-", "1.2.3",
	} {
		m, nd, frac, n, ok := decimal([]byte(s))
		if !ok || n != len(s) || nd > 19 {
			continue
		}
		got, ok := exactDecimal(m, frac, s[0] == '-')
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || got != want) {
			t.Errorf("exactDecimal(%q) = %v, ParseFloat = %v, %v", s, got, want, err)
		}
	}
}

// float converts every JSON number exactly as strconv.ParseFloat does, and
// declines (for the general path) what is not a plain number.
func FuzzFloat(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "0.1", "0.3", "1234567890123456", "9007199254740993", "0.0012345678901234",
		"9007199254740991.5", "123456789012345678901234", "1e5", "01", "-", "1.", ".5", "0.0000000000000000000001", "\"1\"", "null"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, num string) {
		var s scanner
		s.resetBytes([]byte(num + "," + strings.Repeat(" ", 64)))
		got, ok := s.float()
		isNum := len(num) > 0 && jsontext.Value(num).IsValid() && (num[0] == '-' || num[0] >= '0' && num[0] <= '9')
		if !ok {
			if isNum && !strings.ContainsAny(num, "eE") {
				t.Fatalf("float declined the plain number %q", num)
			}
			return
		}
		if s.i != len(num) || !isNum {
			// It read a prefix: only valid when what follows is not part
			// of a number (the caller's next() rejects it).
			if s.i > len(num) || strings.ContainsAny(num[:s.i], " ,") {
				t.Fatalf("float read %d bytes of %q", s.i, num)
			}
			return
		}
		want := parseFloat([]byte(num))
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("float(%q) = %v (%x), ParseFloat %v (%x)", num, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	})
}

// eiselLemire agrees with strconv, bit for bit, on millions of numbers of
// the shapes Kubecost writes: 16 to 19 digits, 0 to 40 decimals.
func TestEiselLemireAgreesWithStrconv(t *testing.T) {
	tab := negPow10s()
	rng := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng }
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	declined := 0
	for i := range n {
		digits := 16 + i%4
		man := next() % pow10u(digits)
		if man == 0 {
			continue
		}
		frac := int(next() % (maxFrac + 1))
		s := strconv.FormatUint(man, 10)
		for len(s) <= frac {
			s = "0" + s
		}
		txt := s[:len(s)-frac] + "." + s[len(s)-frac:]
		if frac == 0 {
			txt = s
		}
		want, err := strconv.ParseFloat(txt, 64)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := eiselLemire(tab, man, frac, false)
		if !ok {
			declined++
			continue
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: eiselLemire %v (%x), strconv %v (%x)", txt, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
	if declined > n/100 { // ties and near-ties go to strconv
		t.Errorf("declined %d of %d numbers", declined, n)
	}
}

func pow10u(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

// slowReader serves b, then one space every millisecond, forever: a body
// that is still coming when the decoder gives up on it.
type slowReader struct{ b []byte }

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.b) > 0 {
		n := copy(p, s.b)
		s.b = s.b[n:]
		return n, nil
	}
	time.Sleep(time.Millisecond)
	p[0] = ' '
	return 1, nil
}

// A malformed body stops the decoder at once: the read-ahead does not go
// on filling its buffer from a body that is still arriving.
func TestDecodeErrorDoesNotWaitForTheBody(t *testing.T) {
	body := []byte(`{"code":200,"data":[{"a":{"name":"a"},"b":{"name":"b",,`)
	start := time.Now()
	n, err := newDecoder(testProjection()).decode(&slowReader{b: body}, testDay, time.Hour, &countingSink{})
	if !errors.Is(err, errSyntax) || n != 1 {
		t.Fatalf("n=%d err=%v, want a syntax error after 1 row", n, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("decode took %v after the error", d)
	}
}

// A NUL byte where JSON expects a value or a delimiter is an error, never
// the end of a container: the scanner's methods use 0 to mean "error".
func TestScannerNUL(t *testing.T) {
	for _, b := range []string{"{\"a\":\x00}", "{\x00}", "[1,\x00]", "[\x00]", "{\"a\":1\x00}", "\x00{}", "{\"a\":[\x00]}"} {
		for _, jagged := range []bool{false, true} {
			if err := scanAll([]byte(b), jagged); !errors.Is(err, errSyntax) {
				t.Errorf("%q (jagged %v): err = %v, want a syntax error", b, jagged, err)
			}
		}
		var sink countingSink
		if _, err := newDecoder(testProjection()).decode(strings.NewReader(`{"data":[{"x":`+b+`}]}`), testDay, time.Hour, &sink); err == nil {
			t.Errorf("decode accepted %q", b)
		}
	}
}
