package kubecostsim

import (
	"io"
	"net/url"
	"testing"
	"time"
)

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkWriteResponse reports JSON generation throughput (MB/s) on one core.
func BenchmarkWriteResponse(b *testing.B) {
	d := day(17)
	for _, bc := range []struct {
		name string
		size int
		v    url.Values
	}{
		{"container/hourly/42k-containers/1h", 42000, qv(d, d.Add(time.Hour), "1h", containerAgg)},
		{"container/daily/4k-containers/1d", 4000, qv(d, d.AddDate(0, 0, 1), "1d", containerAgg)},
		{"container/hourly/4k-containers/1d", 4000, qv(d, d.AddDate(0, 0, 1), "1h", containerAgg)},
		{"namespace/hourly/4k-containers/1d", 4000, qv(d, d.AddDate(0, 0, 1), "1h", "namespace", "idle", "true")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := New(Config{Seed: 1, Now: testNow, ContainersPerHour: bc.size})
			var cw countingWriter
			if err := s.WriteResponse(&cw, bc.v); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(cw.n)
			b.ReportAllocs()
			for b.Loop() {
				if err := s.WriteResponse(io.Discard, bc.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestContainersPerHour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 42k-container cluster")
	}
	s := New(Config{Now: testNow, ContainersPerHour: 42000})
	tr, err := s.Truth(day(18), time.Hour, containerAgg)
	if err != nil {
		t.Fatal(err)
	}
	if perHour := tr.Count / 24; perHour < 38000 || perHour > 46000 {
		t.Errorf("%d containers per hour, want about 42000", perHour)
	}
}
