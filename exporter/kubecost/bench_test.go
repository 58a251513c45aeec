package kubecost

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter/schema"
	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/internal/testkit/kubecostsim"
)

// The benchmarks decode one realistic hourly day at container level: about
// 23,000 allocations and 60 MB from the simulator, with Kubecost 2.x extra
// fields and the usual quirks. Run with
//
//	go test ./exporter/kubecost -run '^$' -bench 'Decode|Tokenize' -benchmem
//
// On a shared machine compare cpu-MB/s (per CPU second of the process),
// not MB/s.
//
// BenchmarkTokenizeFloor only tokenizes the same bytes with jsontext: it is
// the floor that the exporter's end-to-end benchmark compares against.

var benchDay = sync.OnceValues(func() ([]byte, error) {
	sim := kubecostsim.New(kubecostsim.Config{
		Seed:              1,
		ContainersPerHour: 1000,
		Now:               func() time.Time { return testDay.Add(10 * 24 * time.Hour) },
		Quirks: kubecostsim.Quirks{
			ExtraFields: true, NullNumbers: true, NegativeZero: true, NaNStrings: true,
		},
	})
	var b bytes.Buffer
	err := sim.WriteResponse(&b, benchQuery())
	return b.Bytes(), err
})

// benchQuery is FetchDay's query for an hourly day at container level.
func benchQuery() url.Values {
	return url.Values{
		"window":    {testDay.Format(time.RFC3339) + "," + testDay.Add(24*time.Hour).Format(time.RFC3339)},
		"aggregate": {containerAggregate}, "step": {"1h"}, "accumulate": {"false"},
		"idle": {"true"}, "splitIdle": {"true"}, "idleByNode": {"true"}, "shareTenancyCosts": {"true"},
	}
}

// benchInput returns the day's body. The returned func, deferred, reports
// cpu-MB/s: throughput per CPU second of the whole process (GC included),
// which stays steady on a busy machine where the wall-clock MB/s swings.
func benchInput(b *testing.B) ([]byte, func()) {
	body, err := benchDay()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuTime()
	return body, func() {
		if cpu := cpuTime() - c0; cpu > 0 && b.N > 0 {
			b.ReportMetric(float64(len(body))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
		}
	}
}

func benchProjection() *schema.Projection {
	return schema.NewProjection("arn:aws:eks:us-east-1:111122223333:cluster/one", "one",
		[]string{"app.kubernetes.io/name", "team"}, []string{"owner"})
}

// sumSink keeps the compiler honest and checks the candidates agree.
type sumSink struct {
	n     int
	total float64
	names int
}

func (s *sumSink) Write(r *schema.Record) error {
	s.n++
	s.total += r.Num[totalCostIndex]
	s.names += len(r.Name) + len(r.Props[schema.PropNodeInstanceType])
	return nil
}
func (s *sumSink) Reset() error { *s = sumSink{}; return nil }

var totalCostIndex = schema.DoubleIndex("totalCost")

// BenchmarkDecode is the decoder as shipped: one pass that reads, checks
// and parses, on one goroutine.
func BenchmarkDecode(b *testing.B) {
	body, report := benchInput(b)
	defer report()
	d := newDecoder(benchProjection())
	var sink sumSink
	var r bytes.Reader
	for b.Loop() {
		sink.Reset()
		r.Reset(body)
		clear(d.p.strs) // as FetchDay does for every day
		if _, err := d.decode(&r, testDay, time.Hour, &sink); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sink.n), "allocations")
}

// BenchmarkScanCheck is the scanner's check alone: the whole body skipped
// as one value, nothing parsed.
func BenchmarkScanCheck(b *testing.B) {
	body, report := benchInput(b)
	defer report()
	var r bytes.Reader
	var s scanner
	for b.Loop() {
		r.Reset(body)
		s.reset(&r)
		s.skip()
		if err := s.end(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONTextCheck is jsontext's check of the same bytes (ReadValue
// of the whole body), which the decoder used to run before parsing.
func BenchmarkJSONTextCheck(b *testing.B) {
	body, report := benchInput(b)
	defer report()
	var dec jsontext.Decoder
	var r bytes.Reader
	for b.Loop() {
		r.Reset(body)
		dec.Reset(&r, decoderOptions...)
		if _, err := dec.ReadValue(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeStdlibToken(b *testing.B) {
	body, report := benchInput(b)
	defer report()
	p := benchProjection()
	var sink sumSink
	for b.Loop() {
		sink.Reset()
		if _, err := decodeStdlib(bytes.NewReader(body), p, &sink); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sink.n), "allocations")
}

func BenchmarkTokenizeFloor(b *testing.B) {
	body, report := benchInput(b)
	defer report()
	var dec jsontext.Decoder
	var r bytes.Reader
	for b.Loop() {
		r.Reset(body)
		dec.Reset(&r, decoderOptions...)
		for {
			if _, err := dec.ReadToken(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

func TestDecodeCandidatesAgree(t *testing.T) {
	sim := kubecostsim.New(kubecostsim.Config{
		Seed: 3, ContainersPerHour: 50, Now: func() time.Time { return testDay.Add(10 * 24 * time.Hour) },
		Quirks: kubecostsim.Quirks{ExtraFields: true, NullNumbers: true, NegativeZero: true, NaNStrings: true, OffsetTimes: true},
	})
	var body bytes.Buffer
	if err := sim.WriteResponse(&body, benchQuery()); err != nil {
		t.Fatal(err)
	}
	var a, s sumSink
	if _, err := newDecoder(benchProjection()).decode(bytes.NewReader(body.Bytes()), testDay, time.Hour, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeStdlib(bytes.NewReader(body.Bytes()), benchProjection(), &s); err != nil {
		t.Fatal(err)
	}
	if a != s || a.n < 1000 {
		t.Fatalf("jsontext %+v, stdlib %+v", a, s)
	}
}

// decodeStdlib is the encoding/json Decoder.Token candidate, kept only for
// the benchmark. It fills records like decoder.decode, minus the fallbacks.
func decodeStdlib(r io.Reader, p *schema.Projection, sink *sumSink) (int, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	rec := p.NewRecord()
	n := 0
	skip := func() error {
		depth := 0
		for {
			t, err := dec.Token()
			if err != nil {
				return err
			}
			switch t {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				return nil
			}
		}
	}
	str := func() (string, error) {
		t, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch v := t.(type) {
		case string:
			return v, nil
		case json.Number:
			return string(v), nil
		case json.Delim:
			return "", errors.New("unexpected composite")
		}
		return "", nil
	}
	// object calls fn for each member of the next value if it is an object.
	object := func(fn func(key string) error) error {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if t != json.Delim('{') {
			if d, ok := t.(json.Delim); ok && d == '[' {
				for dec.More() {
					if err := skip(); err != nil {
						return err
					}
				}
				_, err = dec.Token()
			}
			return err
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			if err := fn(k.(string)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	labels := func(slot func(string) int, dst []string) error {
		return object(func(k string) error {
			s := slot(k)
			if s < 0 {
				return skip()
			}
			v, err := str()
			dst[s] = v
			return err
		})
	}
	alloc := func(k string) error {
		p.Reset(rec)
		err := object(func(k string) error {
			if i := schema.DoubleIndex(k); i >= 0 {
				t, err := dec.Token()
				if err != nil {
					return err
				}
				switch v := t.(type) {
				case json.Number:
					rec.Num[i], _ = strconv.ParseFloat(string(v), 64)
				case string:
					rec.Num[i], _ = strconv.ParseFloat(v, 64)
				case json.Delim:
					return errors.New("unexpected composite")
				}
				return nil
			}
			switch k {
			case "name":
				v, err := str()
				rec.Name = v
				return err
			case "window":
				return object(func(k string) error {
					v, err := str()
					if err != nil {
						return err
					}
					if t, ok := parseTime([]byte(v)); ok {
						if k == "start" {
							rec.Start = t
						} else if k == "end" {
							rec.End = t
						}
					}
					return nil
				})
			case "properties":
				return object(func(k string) error {
					if i, ok := schema.KubecostPropIndex(k); ok {
						v, err := str()
						rec.Props[i] = v
						return err
					}
					switch k {
					case "labels":
						return labels(p.LabelSlot, rec.Labels)
					case "annotations":
						return labels(p.AnnotationSlot, rec.Annotations)
					}
					return skip()
				})
			}
			return skip()
		})
		if err != nil {
			return err
		}
		p.Finish(rec)
		n++
		return sink.Write(rec)
	}
	err := object(func(k string) error {
		if k != "data" {
			return skip()
		}
		t, err := dec.Token()
		if err != nil || t != json.Delim('[') {
			return err
		}
		for dec.More() {
			if err := object(alloc); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	})
	return n, err
}
