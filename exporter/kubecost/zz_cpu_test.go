package kubecost

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	if os.Getenv("ZZCPU") == "" {
		t.Skip()
	}
	body, _ := benchDay()
	mb := float64(len(body)) / 1e6
	run := func(name string, f func()) {
		best := time.Duration(1 << 62)
		for i := 0; i < 7; i++ {
			c0 := cpuNow()
			f()
			if d := cpuNow() - c0; d < best {
				best = d
			}
		}
		fmt.Printf("%-10s %7.1f MB/s (cpu)\n", name, mb/best.Seconds())
	}
	d := newDecoder(benchProjection())
	var sink sumSink
	run("jsontext", func() { sink.Reset(); d.decode(bytes.NewReader(body), testDay, time.Hour, &sink) })
	run("stdlib", func() { sink.Reset(); decodeStdlib(bytes.NewReader(body), benchProjection(), &sink) })
	var dec jsontext.Decoder
	run("floor", func() {
		dec.Reset(bytes.NewReader(body), decoderOptions...)
		for {
			if _, err := dec.ReadToken(); err == io.EOF {
				break
			}
		}
	})
	if f := zzExtra; f != nil {
		run("scanner", func() { sink.Reset(); f(body, &sink) })
	}
}

var zzExtra func([]byte, *sumSink)

func TestZZMiss(t *testing.T) {
	body, _ := benchDay()
	d := newDecoder(benchProjection())
	var sink sumSink
	d.decode(bytes.NewReader(body), testDay, time.Hour, &sink)
	
	n := 0
	for _, e := range d.labels.ents { if e.set { n++ } }
	fmt.Println("label entries", n)
}

func TestZZColl(t *testing.T) {
	body, _ := benchDay()
	d := newDecoder(benchProjection())
	orig := d.fields.resolve
	seen := map[string]int{}
	d.fields.resolve = func(b []byte) int { seen[string(b)]++; return orig(b) }
	op := d.props.resolve
	d.props.resolve = func(b []byte) int { seen["P:"+string(b)]++; return op(b) }
	var sink sumSink
	d.decode(bytes.NewReader(body), testDay, time.Hour, &sink)
	for k, v := range seen { if v > 10 { fmt.Println(k, v) } }
}
