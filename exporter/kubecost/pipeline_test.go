package kubecost

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// bigBody is a response of many pipeline batches (about 5 MB).
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
	if b.Len() < 8*batchBytes {
		t.Fatalf("body of %d bytes fills too few batches", b.Len())
	}
	return b.Bytes()
}

// The pipelined decoder writes the same rows, in the same order, as the
// serial one.
func TestPipelineKeepsOrder(t *testing.T) {
	body := bigBody(t)
	var rows [2]memSink
	for i, serial := range []bool{true, false} {
		d := newDecoder(testProjection())
		d.pipe.serial = serial
		n, err := d.decode(bytes.NewReader(body), testDay, time.Hour, &rows[i])
		if err != nil || n != len(rows[i].rows) {
			t.Fatalf("serial=%v: n=%d rows=%d err=%v", serial, n, len(rows[i].rows), err)
		}
	}
	if len(rows[0].rows) != len(rows[1].rows) {
		t.Fatalf("%d rows serial, %d pipelined", len(rows[0].rows), len(rows[1].rows))
	}
	for i := range rows[0].rows {
		a, b := &rows[0].rows[i], &rows[1].rows[i]
		if a.Name != b.Name || a.Start != b.Start || a.Num != b.Num || a.Props != b.Props {
			t.Fatalf("row %d differs: %q@%d vs %q@%d", i, a.Name, a.Start, b.Name, b.Start)
		}
	}
}

// countingSink counts writes and fails when written to after decode
// returned: nothing of a failed attempt may reach the sink once the caller
// may reset it.
type countingSink struct {
	t      *testing.T
	n      atomic.Int64
	closed atomic.Bool
	failAt int64
}

func (s *countingSink) Write(*schema.Record) error {
	if s.closed.Load() {
		s.t.Error("Write after decode returned")
	}
	if n := s.n.Add(1); s.failAt > 0 && n >= s.failAt {
		return errors.New("disk full")
	}
	return nil
}

func (s *countingSink) Reset() error { return nil }

// A body cut deep into the response: the allocations before the cut are
// written (so the caller resets the sink), the count is exact, and every
// write happened before decode returned.
func TestPipelineTruncatedBody(t *testing.T) {
	// In a synctest bubble, Wait returns once every goroutine the decoder
	// started has exited or is blocked, so a straggling write shows up
	// without sleeping.
	synctest.Test(t, func(t *testing.T) {
		body := bigBody(t)
		d := newDecoder(testProjection())
		for _, cut := range []int{len(body) / 3, len(body) - 10} {
			sink := &countingSink{t: t}
			n, err := d.decode(bytes.NewReader(body[:cut]), testDay, time.Hour, sink)
			sink.closed.Store(true)
			if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
				t.Errorf("cut at %d: err = %v, want unexpected EOF", cut, err)
			}
			synctest.Wait()
			if n == 0 || int64(n) != sink.n.Load() {
				t.Errorf("cut at %d: returned %d, wrote %d", cut, n, sink.n.Load())
			}
		}
		// The decoder is reusable after errors: nothing is left in its batches.
		var all memSink
		n, err := d.decode(bytes.NewReader(body), testDay, time.Hour, &all)
		if err != nil || n != len(all.rows) || n < 1000 {
			t.Fatalf("after truncations: n=%d rows=%d err=%v", n, len(all.rows), err)
		}
	})
}

// A sink error stops the reading stage early and is reported as such.
func TestPipelineSinkErrorStopsReading(t *testing.T) {
	body := bigBody(t)
	sink := &countingSink{t: t, failAt: 10}
	r := &countingReader{r: bytes.NewReader(body)}
	n, err := newDecoder(testProjection()).decode(r, testDay, time.Hour, sink)
	sink.closed.Store(true)
	var se *sinkError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the sink's error", err)
	}
	if n != 9 {
		t.Errorf("returned %d, want the 9 rows written before the failure", n)
	}
	// The reading stage notices at its next batch handoff, with at most
	// the queued batches read ahead.
	if max := int64((pipeBatches + 2) * (batchBytes + 64<<10)); r.n > max {
		t.Errorf("read %d of %d bytes after the sink failed; want at most %d", r.n, len(body), max)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// The scanner finds the same values and member names as jsontext in any
// valid JSON: it is what the parsing stage trusts instead of validating.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(quirkyResponse))
	f.Add([]byte(`{"a\"b\\":"x\\\"","":[],"c":{"d":[1,-2.5e3,true,false,null,"\u0041"]}}`))
	f.Add([]byte(` { "a" : 1 , "b" : [ ] } `))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !jsontext.Value(b).IsValid(decoderOptions...) {
			return
		}
		var s scanner
		s.reset(b)
		v := s.value()
		if want := bytes.TrimSpace(b); !bytes.Equal(v, want) {
			t.Fatalf("value %q, want %q", v, want)
		}
		if v[0] != '{' {
			return
		}
		// Member names and values, one level down.
		dec := jsontext.NewDecoder(bytes.NewReader(b), decoderOptions...)
		if _, err := dec.ReadToken(); err != nil {
			t.Fatal(err)
		}
		s.reset(b)
		if !s.enter() {
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
			name, err := dec.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			if !ok || string(k) != string(name[1:len(name)-1]) {
				t.Fatalf("member %q, want %s", k, name)
			}
			val, err := dec.ReadValue()
			if err != nil {
				t.Fatal(err)
			}
			if got := s.value(); !bytes.Equal(got, val) {
				t.Fatalf("member %s: value %q, want %q", name, got, val)
			}
		}
	})
}

func TestSmallNumber(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "60", "0.025", "64401427", "1.5", "-2.75", "123456789012345", "0.000000000000001",
		"9007199254740993", "0.1", "0.3", "1234567.891", ".5", "5.", "1e3", "0x10", "", "-", "1.2.3",
	} {
		got, ok := smallNumber([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || got != want) {
			t.Errorf("smallNumber(%q) = %v, ParseFloat = %v, %v", s, got, want, err)
		}
	}
}
